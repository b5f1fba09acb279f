#pragma once
// Installs catalog models from where they are published upstream: direct file downloads, or a
// release .zip holding the files. Downloads go through net::download_file (resume, SHA-256) into
// the cache's hidden .downloads folder, so a cut connection resumes on the next attempt or run.
#include <filesystem>
#include <map>
#include <string>

#include "library/catalog.h"
#include "library/installed_model.h"
#include "library/model_cache.h"
#include "net/http_download.h"

namespace framelift::library {

class UpstreamInstaller {
 public:
  // `attempts`: tries per download; a retry resumes and happens only when the last try got bytes.
  UpstreamInstaller(ModelCache& cache, net::DownloadOptions options = {}, int attempts = 3);
  ~UpstreamInstaller();  // deletes the release archives it downloaded (the models were extracted)
  UpstreamInstaller(const UpstreamInstaller&) = delete;
  UpstreamInstaller& operator=(const UpstreamInstaller&) = delete;

  // Tries the model's upstream sources in catalog order (skipping web pages and other formats)
  // and installs from the first that yields every file with the catalog's SHA-256. Throws
  // Error naming the URL(s) and the problem when none does; an Output error (the cache is full
  // or cannot be written) at once, as every other source would write into the same cache.
  InstalledModel install(const CatalogModel& model);

 private:
  // Downloads `url` to .downloads/<name>, resuming after cut connections.
  std::filesystem::path fetch(const std::string& url, const std::string& name, const std::string& sha256);
  InstalledModel install_files(const CatalogModel& model, const std::map<std::string, std::string>& urls);
  InstalledModel install_from_zip(const CatalogModel& model, const std::string& url);

  ModelCache& cache_;
  net::DownloadOptions options_;
  int attempts_;
  std::map<std::string, std::filesystem::path> archives_;  // url -> downloaded .zip, shared by its models
};

}  // namespace framelift::library
