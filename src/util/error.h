#pragma once
// The one error type is public (include/framelift/error.h): embedders catch what the CLI reports.
#include <framelift/error.h>
