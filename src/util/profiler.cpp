#include "util/profiler.h"

#include <algorithm>

#include "util/str.h"

namespace framelift {
namespace {

thread_local Profiler* current_profiler = nullptr;
thread_local Section* innermost = nullptr;
thread_local int current_stage = 0;

}  // namespace

std::map<std::string, SectionStats> Profiler::sections() const {
  std::lock_guard lock(mutex_);
  return sections_;
}

void Profiler::add(const std::string& key, double seconds, int64_t calls, double work, int64_t peak) {
  add(key, seconds, calls, work, peak, 0);
}

void Profiler::add(const std::string& key, double seconds, int64_t calls, double work, int64_t peak, double max_work,
                   bool keep_span) {
  std::lock_guard lock(mutex_);
  SectionStats& s = sections_[key];
  s.seconds += seconds;
  s.calls += calls;
  s.work += work;
  s.peak_bytes = std::max(s.peak_bytes, peak);
  s.max_work = std::max(s.max_work, max_work);
  if (keep_span) s.spans.emplace_back(seconds, work);
}

void count_work(const char* key, double units) {
  if (current_profiler) current_profiler->add(key, 0, 0, units, 0);
}

bool profiling() { return current_profiler != nullptr; }

ProfileScope::ProfileScope(Profiler* profiler) : previous_(current_profiler) { current_profiler = profiler; }
ProfileScope::~ProfileScope() { current_profiler = previous_; }

Section::Section(const char* name, bool memory, int stage) : profiler_(current_profiler), memory_(memory) {
  if (!profiler_) return;
  outer_stage_ = current_stage;
  if (stage >= 0) current_stage = stage;
  key_ = current_stage > 0 ? str(current_stage, ":", name) : std::string(name);
  const auto now = std::chrono::steady_clock::now();
  outer_ = innermost;
  if (outer_) outer_->pause(now);
  innermost = this;
  resume(now);
}

Section::~Section() {
  if (!profiler_) return;
  const auto now = std::chrono::steady_clock::now();
  pause(now);
  profiler_->add(key_, seconds_, 1, work_, peak_, work_, memory_);
  innermost = outer_;
  current_stage = outer_stage_;
  if (outer_) outer_->resume(now);
}

void Section::pause(std::chrono::steady_clock::time_point now) {
  seconds_ += std::chrono::duration<double>(now - since_).count();
  if (memory_) peak_ = std::max(peak_, profiler_->probe_peak());
}

void Section::resume(std::chrono::steady_clock::time_point now) {
  if (memory_) profiler_->probe_peak();  // start a fresh measurement for this span
  since_ = now;
}

StageScope::StageScope(int index) : section_("stage", false, index) {}

}  // namespace framelift
