#include "deploy/names.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::deploy {
namespace {

constexpr size_t kMaxK8sName = 42;

std::string folder_name(const std::filesystem::path& job_dir) {
  std::filesystem::path p = job_dir.lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

}  // namespace

std::string slurm_job_name(const std::filesystem::path& job_dir) {
  std::string name = "framelift-";
  for (char c : folder_name(job_dir)) name += alnum(c) || c == '.' || c == '_' || c == '-' ? c : '_';
  return name;
}

std::string k8s_name(const std::filesystem::path& job_dir) {
  std::string name = "framelift-";
  for (char c : folder_name(job_dir)) {
    char lower = c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
    if (alnum(lower)) name += lower;
    else if (name.back() != '-') name += '-';
  }
  if (name.size() > kMaxK8sName) name.resize(kMaxK8sName);
  while (name.back() == '-') name.pop_back();
  return name;
}

void check_k8s_name(std::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxK8sName && alnum(name.front()) && alnum(name.back());
  for (char c : name) ok = ok && ((alnum(c) && !(c >= 'A' && c <= 'Z')) || c == '-');
  if (!ok)
    throw Error(ErrorKind::Usage, str("--name: '", name, "' is not a Kubernetes name (lower case letters, digits and '-', at most ",
                                      kMaxK8sName, " characters)"));
}

}  // namespace framelift::deploy
