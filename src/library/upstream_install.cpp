#include "library/upstream_install.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "library/archive_reader.h"
#include "library/staged_install.h"
#include "net/sha256.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

// The last path segment of a URL without query or fragment, safe as a file name.
std::string url_file_name(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  std::string name = path.substr(path.rfind('/') + 1);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return name.empty() || name.front() == '.' ? "download" : name;
}

bool is_zip_url(const std::string& url) {
  std::string name = url_file_name(url);
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".zip") == 0;
}

// Distinct URLs with the same last segment must not share a download file.
std::string download_name(const std::string& url) {
  net::Sha256 h;
  h.update(url);
  return str(h.hex().substr(0, 12), "-", url_file_name(url));
}

}  // namespace

UpstreamInstaller::UpstreamInstaller(ModelCache& cache, net::DownloadOptions options, int attempts)
    : cache_(cache), options_(std::move(options)), attempts_(std::max(1, attempts)) {}

UpstreamInstaller::~UpstreamInstaller() {
  std::error_code ec;
  for (auto& [url, file] : archives_) fs::remove(file, ec);
}

fs::path UpstreamInstaller::fetch(const std::string& url, const std::string& name, const std::string& sha256) {
  std::error_code ec;
  fs::create_directories(cache_.downloads_dir(), ec);
  const fs::path dest = cache_.downloads_dir() / name;
  const fs::path part = net::download_part_path(dest);
  net::DownloadOptions options = options_;
  options.expected_sha256 = sha256;
  for (int attempt = 1;; ++attempt) {
    const auto before = fs::exists(part, ec) ? fs::file_size(part, ec) : 0;
    try {
      net::DownloadResult r = net::download_file(url, dest, options);
      if (r.resumed_from > 0) log::info(url, ": resumed at byte ", r.resumed_from);
      return dest;
    } catch (const Error& e) {
      const auto after = fs::exists(part, ec) ? fs::file_size(part, ec) : 0;
      // Only a cut transfer that made progress is worth another try; 404s and hash mismatches are not.
      if (e.kind() != ErrorKind::Input || attempt >= attempts_ || after <= before) throw;
      log::info(url, ": connection lost after ", after, " bytes; resuming (try ", attempt + 1, " of ", attempts_, ")");
    }
  }
}

InstalledModel UpstreamInstaller::install_files(const CatalogModel& model, const std::map<std::string, std::string>& urls) {
  StagedInstall staging(cache_, model.name, model.files);
  std::string source;
  for (const ModelFile& f : model.files) {
    const std::string& url = urls.at(f.name);
    const fs::path got = fetch(url, str(model.name, "--", f.name), f.sha256);
    std::error_code ec;
    fs::rename(got, staging.file(f.name), ec);
    if (ec) throw Error(ErrorKind::Output, str(got.string(), ": cannot move into the cache (", ec.message(), ")"));
    source += (source.empty() ? "" : " ") + url;
  }
  return staging.commit(manifest_for(model, source));
}

InstalledModel UpstreamInstaller::install_from_zip(const CatalogModel& model, const std::string& url) {
  StagedInstall staging(cache_, model.name, model.files);  // before the download: no room, no download
  if (!archives_.count(url)) archives_[url] = fetch(url, download_name(url), "");
  std::set<std::string> found;
  std::string mismatches;
  ArchiveReader reader(archives_.at(url));
  while (found.size() < model.files.size() && reader.next()) {
    if (!reader.is_file()) continue;
    const ModelFile* f = model.file(fs::path(reader.path()).filename().string());
    if (!f || found.count(f->name)) continue;
    // Releases hold several files of one name (models-cunet/ and models-upconv_7/): the hash decides.
    if (reader.extract_to(staging.file(f->name), f->size) == f->sha256) found.insert(f->name);
    else mismatches += str(mismatches.empty() ? "" : ", ", reader.path());
  }
  for (const ModelFile& f : model.files)
    if (!found.count(f.name))
      throw Error(ErrorKind::Input, str(url, ": holds no ", f.name, " with the catalog's SHA-256 for model ", model.name,
                                        mismatches.empty() ? "" : str(" (other bytes in ", mismatches, ")")));
  return staging.commit(manifest_for(model, url));
}

InstalledModel UpstreamInstaller::install(const CatalogModel& model) {
  std::vector<std::string> failures;
  for (const UpstreamSource& s : model.upstream) {
    if (s.page || s.format != model.format) continue;
    try {
      if (!s.urls.empty()) {
        for (const ModelFile& f : model.files)
          if (!s.urls.count(f.name)) throw Error(ErrorKind::Input, str("upstream source of ", model.name, " has no URL for ", f.name));
        return install_files(model, s.urls);
      }
      if (is_zip_url(s.url)) return install_from_zip(model, s.url);
      if (model.files.size() == 1) return install_files(model, {{model.files.front().name, s.url}});
      failures.push_back(str(s.url, ": one file, but model ", model.name, " has ", model.files.size()));
    } catch (const Error& e) {
      // The next source would write into the same cache: a full or read-only one is the error.
      if (e.kind() == ErrorKind::Interrupted || e.kind() == ErrorKind::Output) throw;
      failures.push_back(e.what());
    }
  }
  if (failures.empty())
    throw Error(ErrorKind::Model, str("model ", model.name, ": the catalog has no download for it (",
                                      model.npm ? str("its npm package ", model.npm->package, " is the only source") : "no source",
                                      ")"));
  std::string all;
  for (auto& f : failures) all += (all.empty() ? "" : "; ") + f;
  throw Error(ErrorKind::Input, all);
}

}  // namespace framelift::library
