#pragma once
// One model being installed. Its files are written into a hidden folder inside the cache
// (.staging-NAME-XXXXXX, same filesystem as the final folder); commit() verifies every file's
// SHA-256 against the manifest, syncs them and renames the folder into place in one step. Until
// then, and forever if anything fails, the model is simply not installed.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "library/model_cache.h"

namespace framelift::library {

class StagedInstall {
 public:
  // Takes the cache lock (ModelCache::lock) for its lifetime. Throws Error(Usage) for a bad name,
  // Error(Output) when the cache cannot be written, and Error(Output, "<cache>: not enough free
  // space for model NAME (needs N bytes, M free)") when its filesystem has less room than the
  // sizes of `files` add up to: refused before anything is written.
  StagedInstall(ModelCache& cache, const std::string& name, const std::vector<ModelFile>& files);
  ~StagedInstall();  // removes the staging folder unless committed
  StagedInstall(const StagedInstall&) = delete;
  StagedInstall& operator=(const StagedInstall&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file(const std::string& file_name) const;  // dir()/file_name, checked

  // Checks that the staging folder holds exactly the manifest's files with their sizes and
  // SHA-256, writes the manifest, fsyncs, and renames the folder to the model's name (swapping
  // out an installed model of that name atomically). Throws Error(Model, "<file>: ...") on a
  // mismatch; the staging folder is then discarded.
  InstalledModel commit(InstalledModel manifest);

 private:
  ModelCache& cache_;
  std::string name_;
  std::shared_ptr<void> lock_;
  std::filesystem::path dir_;
  bool committed_ = false;
};

// Copies `from` to `to` (a file in a staging folder), returning the SHA-256 of the bytes written.
std::string copy_and_hash(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace framelift::library
