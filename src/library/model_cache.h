#pragma once
// The folder of installed models: one sub-folder per model holding its files and a manifest
// (installed_model.h). Everything whose name starts with a dot is the cache's own bookkeeping
// (installs in progress, downloads, the lock) and is never a model, so a crash mid-install leaves
// nothing that `list` or `-m NAME` would pick up.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "library/installed_model.h"

namespace framelift::library {

struct VerifyProblem {
  std::string model;
  std::string file;     // empty when the problem is the model's folder or manifest
  std::string problem;  // "SHA-256 mismatch (expected ..., got ...)", "missing", ...
  std::filesystem::path path;
  std::string message() const;  // one line: "<path>: model NAME: <problem>"
};

class ModelCache {
 public:
  explicit ModelCache(std::filesystem::path root);  // nothing is created before an install
  static ModelCache open_default();                 // locations.h: default_cache_root()

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path model_dir(const std::string& name) const { return root_ / name; }
  std::filesystem::path downloads_dir() const { return root_ / ".downloads"; }

  // Installed models, sorted by name. Folders without a readable manifest are not models.
  std::vector<InstalledModel> list() const;
  std::optional<InstalledModel> find(const std::string& name) const;

  // The file to load for an installed model, after checking every file against its manifest
  // size and SHA-256 (hashed again only when the file changed since it was last hashed:
  // verified_files.h). Throws Error(Model, "<file>: ...").
  std::filesystem::path checked_main_file(const InstalledModel& model) const;

  // Every file's size and SHA-256 against the manifest.
  std::vector<VerifyProblem> verify(const InstalledModel& model) const;
  // Model folders whose manifest is missing or unreadable (a damaged cache).
  std::vector<VerifyProblem> damaged_folders() const;

  // Removes an installed model: renamed to a hidden name first, so no reader ever sees half of
  // it. Throws Error(Model) when NAME is not installed.
  void remove(const std::string& name);

  // Serializes writers (install, import, remove) across processes; held while the returned
  // handle lives. Re-entrant within one ModelCache object. Taking it clears what a crashed
  // writer left behind (.staging-* folders). Throws Error(Resource) when another process holds it.
  std::shared_ptr<void> lock();

 private:
  std::filesystem::path root_;
  std::weak_ptr<void> lock_;
};

// Throws Error(Usage) unless `name` can be a model folder's name: not empty, no '/', no leading
// dot, printable, at most 128 characters.
void check_model_name(const std::string& name);

}  // namespace framelift::library
