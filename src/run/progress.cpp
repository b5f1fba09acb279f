#include "run/progress.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "lifecycle/cost_meter.h"
#include "util/error.h"
#include "util/json_text.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

std::string clock_text(double seconds) {
  if (seconds < 0) return "--:--";
  int s = int(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%02d:%02d", s / 60, s % 60);
  return buf;
}

}  // namespace

std::string ProgressSnapshot::to_json(const std::string& event) const {
  nlohmann::json j{{"event", event},          {"frames_in", frames_in}, {"frames_out", frames_out},
                   {"total_frames", total_out}, {"fps", fps},           {"elapsed_s", elapsed_s},
                   {"eta_s", eta_s}};
  if (total_in > 0) j["total_in"] = total_in;
  if (fraction >= 0) j["fraction"] = fraction;
  if (spent >= 0) j["cost_spent"] = spent;
  if (projected >= 0) j["cost_projected"] = projected;
  return json_text(j);
}

std::string ProgressSnapshot::to_bar(int width) const {
  std::string bar;
  if (fraction >= 0 || total_out > 0) {
    double done = fraction >= 0 ? fraction : std::min(1.0, double(frames_out) / double(total_out));
    int filled = int(done * width);
    bar = str("[", std::string(filled, '#'), std::string(width - filled, '.'), "] ", int(done * 100), "% ");
  }
  char fps_text[32];
  std::snprintf(fps_text, sizeof fps_text, "%.2f", fps);
  std::string cost;
  if (spent >= 0) {
    lifecycle::CostEstimate estimate{spent, std::nullopt};
    if (projected >= 0) estimate.total_usd = projected;
    cost = "  " + lifecycle::format_cost(estimate);
  }
  const std::string count = total_in > 0 ? str(frames_in, "/", total_in, " input frames  ")
                                         : str(frames_out, total_out > 0 ? str("/", total_out) : std::string(), " frames  ");
  return str(bar, count, fps_text, " fps  elapsed ", clock_text(elapsed_s), "  eta ", clock_text(eta_s), cost);
}

ProgressReporter::ProgressReporter(ProgressMode mode, const ProgressCounters& counters)
    : mode_(mode), counters_(counters), start_(std::chrono::steady_clock::now()) {
  if (mode_ == ProgressMode::Auto) mode_ = isatty(STDERR_FILENO) ? ProgressMode::Bar : ProgressMode::None;
  if (mode_ != ProgressMode::None) thread_ = std::thread([this] { loop(); });
}

ProgressReporter::~ProgressReporter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ProgressSnapshot ProgressReporter::snapshot() const {
  ProgressSnapshot s;
  s.frames_in = counters_.frames_in;
  s.frames_out = counters_.frames_out;
  s.total_out = counters_.total_out;
  s.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  s.fps = s.elapsed_s > 0 ? double(s.frames_out) / s.elapsed_s : 0;
  s.total_in = counters_.total_in;
  if (s.total_in > 0) {
    s.fraction = std::min(1.0, double(s.frames_in) / double(s.total_in));
    const double rate_in = s.elapsed_s > 0 ? double(s.frames_in - counters_.start_in) / s.elapsed_s : 0;
    if (rate_in > 0) s.eta_s = double(std::max<int64_t>(0, s.total_in - s.frames_in)) / rate_in;
  } else if (s.total_out > 0 && s.fps > 0) {
    s.eta_s = double(std::max<int64_t>(0, s.total_out - s.frames_out)) / s.fps;
  }
  if (counters_.hourly_price > 0) {
    const lifecycle::CostEstimate cost =
        lifecycle::estimate_cost(counters_.hourly_price, s.elapsed_s, counters_.earlier_seconds, std::max(0.0, s.fraction));
    s.spent = cost.spent_usd;
    s.projected = cost.total_usd.value_or(-1);
  }
  return s;
}

void ProgressReporter::loop() {
  std::unique_lock lock(mutex_);
  const auto period = mode_ == ProgressMode::Json ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(250);
  while (!wake_.wait_for(lock, period, [&] { return stop_; })) print(false);
}

void ProgressReporter::print(bool final) {
  ProgressSnapshot s = snapshot();
  if (mode_ == ProgressMode::Json) {
    std::fprintf(stdout, "%s\n", s.to_json(final ? "done" : "progress").c_str());
    std::fflush(stdout);
  } else if (mode_ == ProgressMode::Bar) {
    std::fprintf(stderr, "\r\033[K%s%s", s.to_bar(30).c_str(), final ? "\n" : "");
    std::fflush(stderr);
  }
}

void ProgressReporter::finish() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (mode_ != ProgressMode::None) print(true);
}

}  // namespace framelift::pipeline
