#pragma once
// An install's or import's report as the public API gives it (framelift/models.h).
#include "framelift/models.h"
#include "library/install_report.h"

namespace framelift::api {

ModelInstallResult install_result(library::InstallReport&& report);

}  // namespace framelift::api
