#include "deploy/checks.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::deploy {
namespace {

bool has_control(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace

void check_job_dir(const std::filesystem::path& job_dir) {
  if (!job_dir.is_absolute())
    throw Error(ErrorKind::Usage, str("--job-dir: must be an absolute path (workers start in other folders), got '", job_dir.string(), "'"));
  if (has_control(job_dir.string()))
    throw Error(ErrorKind::Usage, "--job-dir: the path contains a control character (newline, tab, ...)");
}

void check_workers(int workers) {
  if (workers < 1) throw Error(ErrorKind::Usage, str("-n: expected at least 1 worker, got ", workers));
}

void check_token(std::string_view option, std::string_view value) {
  if (value.empty()) throw Error(ErrorKind::Usage, str(option, ": empty value"));
  for (unsigned char c : value)
    if (c <= 0x20 || c == 0x7f || c == '#' || c == '\'' || c == '"' || c == '\\')
      throw Error(ErrorKind::Usage, str(option, ": '", value, "' contains a space, quote, '#' or control character"));
}

}  // namespace framelift::deploy
