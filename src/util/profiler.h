#pragma once
// Where a run's time goes, for `framelift profile`: exclusive wall time per named section on each
// thread (decode, convert, upload, inference, download, encode, waiting on queues), per stage,
// with call counts, work units (pixels through a network) and the peak memory seen inside.
//
// Sections nest; time is charged to the innermost one, so a stage's own time excludes the
// inference inside it and the next stage it emits to. The profiler is found through a
// thread-local pointer rather than passed down: the sections sit deep in code (the tiler, the
// interpolator) that must not grow a profiling parameter, and with no profiler on a thread a
// Section costs one branch.
//
// Thread-safety: one Profiler may be active on several threads at once (add() locks).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace framelift {

struct SectionStats {
  double seconds = 0;
  int64_t calls = 0;
  double work = 0;          // units the section reports (input pixels for inference)
  double max_work = 0;      // the most one span of the section reported (the largest tile)
  // {seconds, work} of each span, kept for sections that measure memory (the network calls):
  // robust per-call figures need them, and there are few such calls.
  std::vector<std::pair<double, double>> spans;
  int64_t peak_bytes = 0;   // highest of the memory probe's peaks over the section's spans
};

class Profiler {
 public:
  // `peak_probe` returns by how much the memory in use rose above its level at the previous call,
  // at the highest point since, and starts a new measurement (the CPU tensor allocator's figures,
  // or CUDA's); absent: no memory figures.
  explicit Profiler(std::function<int64_t()> peak_probe = {}) : peak_probe_(std::move(peak_probe)) {}

  // Keys are "name" outside stages and "N:name" inside stage N (1-based), see StageScope.
  std::map<std::string, SectionStats> sections() const;
  void add(const std::string& key, double seconds, int64_t calls, double work, int64_t peak);
  void add(const std::string& key, double seconds, int64_t calls, double work, int64_t peak, double max_work,
           bool keep_span = false);
  int64_t probe_peak() const { return peak_probe_ ? peak_probe_() : 0; }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, SectionStats> sections_;
  std::function<int64_t()> peak_probe_;
};

// Adds work units to `key` (outside stages) of the current thread's profiler, if any.
void count_work(const char* key, double units);
// Whether the current thread has a profiler (code that must synchronise a device to be timed).
bool profiling();

// Makes `profiler` the current thread's for the scope's life (nullptr: none).
class ProfileScope {
 public:
  explicit ProfileScope(Profiler* profiler);
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  Profiler* previous_;
};

// Times the enclosing block as section `name` of the current stage (exclusive of inner sections).
class Section {
 public:
  // `memory`: also measure the memory peak inside (the probe is process-wide: measure only in
  // sections of one thread, and never in nested ones).
  explicit Section(const char* name, bool memory = false) : Section(name, memory, -1) {}
  // `stage`: charge to that stage (0: outside all stages) instead of the enclosing one.
  Section(const char* name, bool memory, int stage);
  ~Section();
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;
  // Adds work units (e.g. pixels) to this section.
  void add_work(double units) { work_ += units; }

 private:
  void pause(std::chrono::steady_clock::time_point now);
  void resume(std::chrono::steady_clock::time_point now);

  Profiler* profiler_;
  std::string key_;
  Section* outer_ = nullptr;
  int outer_stage_ = 0;
  bool memory_ = false;
  std::chrono::steady_clock::time_point since_;
  double seconds_ = 0, work_ = 0;
  int64_t peak_ = 0;
};

// Runs the enclosing block as stage `index` (1-based): its time outside inner sections is the
// stage's own ("N:stage"), and sections inside it are keyed "N:name".
class StageScope {
 public:
  explicit StageScope(int index);
  ~StageScope() = default;

 private:
  Section section_;
};

}  // namespace framelift
