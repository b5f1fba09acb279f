#include "infer/memory_budget.h"

#include <c10/core/Allocator.h>

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "util/error.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

// Blocks of at least this size are kept for reuse when freed. glibc hands such sizes out with
// mmap and returns them with munmap, so every new activation tensor page-faults all of its pages
// again: measured on a 2-core VM, a 43 MB prelu took 100 ms that way and 1.6 ms on reused memory,
// a 3x3 convolution 137 ms against 33 ms. A network allocates the same sizes every frame, so
// exact-size reuse catches nearly all of them.
constexpr int64_t kCacheMinBlock = 1 << 20;
constexpr int64_t kCacheCap = int64_t(2) << 30;

// Wraps the allocator libtorch had. Every DataPtr handed out carries the data pointer as its
// context (so that c10's raw_allocate/raw_deallocate, which oneDNN uses, keep working) and our
// deleter, which finds the original context and deleter in a table. Freed large blocks wait in
// a cache for the next allocation of the same size.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  c10::DataPtr allocate(size_t n) const override {
    const int64_t bytes = static_cast<int64_t>(n);
    const int64_t budget = budget_.load(std::memory_order_relaxed);
    // Cached blocks count against a budget: drop them before refusing anything.
    if (budget > 0 && in_use_.load() + cached_.load() + bytes > budget) release_cache();
    const int64_t now = in_use_.fetch_add(bytes) + bytes;
    if (budget > 0 && now > budget && bytes > 0) {
      in_use_.fetch_sub(bytes);
      throw OutOfMemory(framelift::str("out of memory: allocating ", n >> 20, " MiB would exceed the --max-memory budget of ",
                                       budget >> 20, " MiB (", (now - bytes) >> 20, " MiB in use)"));
    }
    raise_peak(now);
    if (bytes >= kCacheMinBlock) {
      if (c10::DataPtr reused = take_cached(bytes); reused.get()) return reused;
    }
    c10::DataPtr original;
    try {
      original = base_->allocate(n);
    } catch (...) {
      // A real allocation failure: give the cache back to the system and try once more.
      if (release_cache() == 0) {
        in_use_.fetch_sub(bytes);
        throw;
      }
      try {
        original = base_->allocate(n);
      } catch (...) {
        in_use_.fetch_sub(bytes);
        throw;
      }
    }
    void* data = original.get();
    if (data == nullptr) {  // zero-size tensors: nothing to track
      in_use_.fetch_sub(bytes);
      return original;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      live_[data] = Entry{original.get_context(), original.get_deleter(), bytes};
    }
    original.release_context();
    return c10::DataPtr(data, data, &CountingAllocator::release, original.device());
  }

  c10::DeleterFnPtr raw_deleter() const override { return &CountingAllocator::release; }

  // PyTorch 2.x added this pure virtual; declared without `override` so 1.13 builds too.
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }

  static void release(void* data) {
    Entry entry;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(data);
      if (it == live_.end()) return;  // cannot happen: only our DataPtrs carry this deleter
      entry = it->second;
      live_.erase(it);
      in_use_.fetch_sub(entry.bytes);
      const int64_t budget = budget_.load();
      const int64_t cap = budget > 0 ? std::min(kCacheCap, budget / 4) : kCacheCap;
      if (entry.bytes >= kCacheMinBlock && cached_.load() + entry.bytes <= cap) {
        cache_.emplace(entry.bytes, Cached{data, entry});
        cached_.fetch_add(entry.bytes);
        return;
      }
    }
    if (entry.deleter) entry.deleter(entry.context);
  }

  // A cached block of exactly `bytes`, registered as live; empty DataPtr when there is none.
  static c10::DataPtr take_cached(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(bytes);
    if (it == cache_.end()) return {};
    Cached block = it->second;
    cache_.erase(it);
    cached_.fetch_sub(bytes);
    live_[block.data] = block.entry;
    return c10::DataPtr(block.data, block.data, &CountingAllocator::release, c10::Device(c10::DeviceType::CPU));
  }

  // Frees every cached block; returns the bytes given back.
  static int64_t release_cache() {
    std::multimap<int64_t, Cached> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks.swap(cache_);
      cached_.store(0);
    }
    int64_t freed = 0;
    for (auto& [bytes, block] : blocks) {
      if (block.entry.deleter) block.entry.deleter(block.entry.context);
      freed += bytes;
    }
    return freed;
  }

  static void raise_peak(int64_t now) {
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {}
  }

  struct Entry {
    void* context = nullptr;
    c10::DeleterFnPtr deleter = nullptr;
    int64_t bytes = 0;
  };

  struct Cached {
    void* data = nullptr;
    Entry entry;
  };

  static inline std::mutex mutex_;
  static inline std::unordered_map<void*, Entry> live_;
  static inline std::multimap<int64_t, Cached> cache_;
  static inline std::atomic<int64_t> cached_{0};
  static inline std::atomic<int64_t> in_use_{0};
  static inline std::atomic<int64_t> peak_{0};
  static inline std::atomic<int64_t> budget_{0};

 private:
  c10::Allocator* base_;
};

std::once_flag g_install_once;
CountingAllocator* g_tracker = nullptr;

int64_t read_number(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  return std::atoll(text.c_str());
}

int64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

}  // namespace

void install_cpu_memory_tracker() {
  std::call_once(g_install_once, [] {
    // Static lifetime, as c10::SetAllocator requires; the highest priority so that no later
    // registration replaces it.
    static CountingAllocator tracker(c10::GetAllocator(c10::DeviceType::CPU));
    g_tracker = &tracker;
    c10::SetAllocator(c10::DeviceType::CPU, &tracker, /*priority=*/UINT8_MAX);
  });
}

void set_cpu_memory_budget(int64_t bytes) {
  if (bytes > 0) install_cpu_memory_tracker();
  CountingAllocator::budget_.store(bytes > 0 ? bytes : 0);
}

int64_t cpu_memory_budget() { return CountingAllocator::budget_.load(); }
int64_t cpu_memory_cached() { return CountingAllocator::cached_.load(); }
int64_t release_cached_cpu_memory() { return CountingAllocator::release_cache(); }
int64_t cpu_memory_in_use() { return CountingAllocator::in_use_.load(); }
int64_t cpu_memory_peak() { return CountingAllocator::peak_.load(); }
void reset_cpu_memory_peak() { CountingAllocator::peak_.store(CountingAllocator::in_use_.load()); }

int64_t available_host_memory() {
  int64_t best = meminfo_available();
  // cgroup v2 (the unified hierarchy mounted at /sys/fs/cgroup in containers).
  int64_t limit = read_number("/sys/fs/cgroup/memory.max");
  if (limit > 0) {
    int64_t left = limit - read_number("/sys/fs/cgroup/memory.current");
    if (left > 0 && (best == 0 || left < best)) best = left;
  }
  return best;
}

int64_t parse_byte_size(const std::string& text) {
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  std::string unit = text.substr(end);
  for (auto& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'I') unit.pop_back();  // GiB == G: binary units throughout
  double scale = unit.empty() ? 1 : unit == "K" ? 1024.0 : unit == "M" ? 1048576.0 : unit == "G" ? 1073741824.0
                                    : unit == "T" ? 1099511627776.0 : -1;
  if (end == 0 || scale < 0 || !(value > 0) || !std::isfinite(value))
    throw Error(ErrorKind::Usage, str("memory size: expected a number with an optional K/M/G/T unit, got '", text, "'"));
  return static_cast<int64_t>(value * scale);
}

}  // namespace framelift::infer
