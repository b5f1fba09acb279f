#pragma once
// What an install or import did, model by model. Installers keep going past one bad model (a
// tarball holds dozens), so failures are collected here instead of ending the whole run.
#include <string>
#include <vector>

#include "library/installed_model.h"
#include "util/error.h"

namespace framelift::library {

struct InstallProblem {
  ErrorKind kind;
  std::string message;  // one line naming the file or model and the problem
};

struct InstallReport {
  std::vector<InstalledModel> installed;   // installed by this call
  std::vector<std::string> unchanged;      // already installed with the same files
  std::vector<InstallProblem> problems;    // models that could not be installed
  std::vector<std::string> notes;          // worth saying, not a failure (a partial set of files)

  void merge(InstallReport&& other);
  bool touched(const std::string& name) const;  // installed now or already
};

}  // namespace framelift::library
