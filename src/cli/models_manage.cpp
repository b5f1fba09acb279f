// `framelift models install|import|verify|remove|info`: the model library from the command line,
// a client of framelift/models.h.
#include <cstdio>

#include "cli/exit_codes.h"
#include "cli/models_actions.h"
#include "framelift/error.h"
#include "framelift/models.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::cli {
namespace {

// Prints what happened, one line per model; the exit code is the first problem's.
int report(const ModelInstallResult& r, const std::string& what) {
  for (size_t i = 0; i < r.installed.size(); ++i) std::printf("installed %s (%s)\n", r.installed[i].c_str(), r.sources[i].c_str());
  for (const auto& n : r.unchanged) std::printf("already installed: %s\n", n.c_str());
  for (const auto& n : r.notes) log::warn(n);
  for (const auto& p : r.problems) log::error(p.message);
  if (!r.problems.empty()) return exit_code(r.problems.front().kind);
  if (r.installed.empty() && r.unchanged.empty())
    throw Error(ErrorKind::Input, str(what, ": holds no model of the catalog (files are matched by SHA-256)"));
  return kExitOk;
}

int report(const ImportedModelFile& m) {
  if (m.unchanged) std::printf("already installed: %s\n", m.name.c_str());
  else
    std::printf("installed %s (%s, %s%s)\n", m.name.c_str(), m.architecture.c_str(), m.scale > 0 ? str(m.scale, "x").c_str() : "",
                m.from_catalog ? ", catalog model" : "");
  return kExitOk;
}

}  // namespace

int install_models(const std::vector<std::string>& names, const std::string& from_dir, bool download) {
  return report(framelift::install_models(names, {.download = download, .from_dir = from_dir}), "install");
}

int import_models(const std::string& path, const std::string& name) {
  const ModelImportResult r = framelift::import_models(path, name);
  return r.file ? report(*r.file) : report(r.bundle, path);
}

int verify_models(const std::vector<std::string>& names) {
  const ModelVerifyResult r = framelift::verify_models(names);
  for (const auto& n : r.ok) std::printf("ok %s\n", n.c_str());
  for (const auto& p : r.problems) log::error(p);
  if (!r.problems.empty()) {
    log::error(r.problems.size(), " problem(s) in ", model_cache_dir(),
               "; reinstall with `framelift models install NAME` (or remove the model)");
    return exit_code(ErrorKind::Model);
  }
  return kExitOk;
}

int remove_models(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    remove_model(n);
    std::printf("removed %s\n", n.c_str());
  }
  return kExitOk;
}

int print_model_info(const std::string& target) {
  std::printf("%s\n", describe_model(target).c_str());
  return kExitOk;
}

}  // namespace framelift::cli
