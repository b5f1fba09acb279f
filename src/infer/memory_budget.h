#pragma once
// Host memory accounting for libtorch, and the `--max-memory` budget on CPU.
//
// libtorch allocates every CPU tensor (and oneDNN's scratch buffers) through the c10 CPU
// allocator. install_cpu_memory_tracker() puts a counting wrapper in front of it, so that
// framelift knows the bytes its tensors hold now and at peak (for tile sizing, benchmarks and the
// profiler), and can refuse an allocation that would exceed a budget. A refused allocation throws
// OutOfMemory, which the tiler answers by halving the tile, exactly as it answers a real CUDA OOM.
//
// Thread-safety: all functions may be called from any thread.
#include <cstdint>
#include <string>

#include "util/error.h"

namespace framelift::infer {

// What an allocation over budget throws; its message starts "out of memory" like libtorch's own.
// A Resource error, so that where it escapes the tiler the CLI exits with the resource code.
class OutOfMemory : public Error {
 public:
  explicit OutOfMemory(const std::string& message) : Error(ErrorKind::Resource, message) {}
};

// Idempotent. Tensors allocated before the call are not counted, and are freed correctly. Model
// runners install it on CPU targets for its block cache (see below).
void install_cpu_memory_tracker();

// 0: no budget. Installs the tracker when needed.
void set_cpu_memory_budget(int64_t bytes);
int64_t cpu_memory_budget();

int64_t cpu_memory_in_use();    // bytes held by live libtorch CPU allocations
// Freed blocks of 1 MiB and more are kept (up to 2 GiB, or a quarter of the budget) for the next
// allocation of the same size, because fresh large blocks page-fault on every touch. Cached
// bytes are not "in use", but count against the budget (they are dropped before a refusal).
int64_t cpu_memory_cached();
int64_t release_cached_cpu_memory();  // returns the bytes given back
int64_t cpu_memory_peak();      // highest cpu_memory_in_use() since the last reset
void reset_cpu_memory_peak();   // peak := in use

// Memory this process can still take from the system: the cgroup limit minus its usage, or
// MemAvailable, whichever is smaller. 0 when unknown.
int64_t available_host_memory();

// "512M", "2G", "1.5GiB", "800000" (bytes) -> bytes; throws Error(Usage) on anything else.
int64_t parse_byte_size(const std::string& text);

}  // namespace framelift::infer
