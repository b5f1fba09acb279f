#pragma once
// CPU thread budget for libtorch. libtorch sizes its pool from the machine's core count, which in
// a container is often wrong both ways: all host cores when a cgroup quota allows two, or one
// thread where the affinity mask allows more. We size it from what this process may really use.
namespace framelift::infer {

// min(CPUs in this process's affinity mask, cgroup CPU quota rounded up), at least 1. Reads the
// cgroup v2 cpu.max and the v1 cpu.cfs_quota_us / cpu.cfs_period_us of this process's cgroup.
int usable_cpu_count();

// Sets libtorch's intra-op threads to `requested`, or usable_cpu_count() when 0. The inter-op
// pool can be sized only once per process and before any parallel work; that is attempted on the
// first call only. Returns the intra-op thread count now in effect.
int configure_cpu_threads(int requested = 0);

}  // namespace framelift::infer
