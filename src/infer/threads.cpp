#include "infer/threads.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include <ATen/Parallel.h>

#include "util/error.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

// This process's cgroup path for a controller ("" = v2 unified), from /proc/self/cgroup.
std::string cgroup_path(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "hierarchy-id:controllers:path"
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (controller.empty() ? controllers.empty() : ("," + controllers + ",").find("," + controller + ",") != std::string::npos)
      return path;
  }
  return {};
}

// Quota / period as a CPU count, 0 when unlimited or unreadable.
double quota_cpus(double quota, double period) { return (quota > 0 && period > 0) ? quota / period : 0; }

double cgroup_v2_cpus() {
  for (const std::string& dir : {"/sys/fs/cgroup" + cgroup_path(""), std::string("/sys/fs/cgroup")}) {
    std::ifstream in(dir + "/cpu.max");
    std::string quota;
    double period = 0;
    if (in >> quota >> period) return quota == "max" ? 0 : quota_cpus(std::atof(quota.c_str()), period);
  }
  return 0;
}

double cgroup_v1_cpus() {
  std::string rel = cgroup_path("cpu");
  for (const std::string& base : {std::string("/sys/fs/cgroup/cpu,cpuacct"), std::string("/sys/fs/cgroup/cpu")}) {
    for (const std::string& dir : {base + rel, base}) {
      std::ifstream q(dir + "/cpu.cfs_quota_us"), p(dir + "/cpu.cfs_period_us");
      double quota = 0, period = 0;
      if (q >> quota && p >> period) return quota_cpus(quota, period);
    }
  }
  return 0;
}

}  // namespace

int usable_cpu_count() {
  int n = affinity_cpus();
  double quota = cgroup_v2_cpus();
  if (quota <= 0) quota = cgroup_v1_cpus();
  if (quota > 0) n = std::min(n, static_cast<int>(std::ceil(quota)));
  return std::max(n, 1);
}

int configure_cpu_threads(int requested) {
  if (requested < 0) throw Error(ErrorKind::Usage, str("threads: ", requested, " is negative"));
  int n = requested == 0 ? usable_cpu_count() : requested;
  static std::once_flag interop_once;
  std::call_once(interop_once, [n] {
    try {
      at::set_num_interop_threads(std::max(1, std::min(n, 4)));
    } catch (const std::exception&) {
      // The pool already started (someone ran parallel work first); its size stays.
    }
  });
  at::set_num_threads(n);
  return at::get_num_threads();
}

}  // namespace framelift::infer
