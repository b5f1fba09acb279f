#pragma once
// --watch-preemption: a background thread that polls the cloud's metadata service and reports,
// once, that the machine is about to be taken back. The job then stops exactly as on SIGTERM
// (finished segments are kept, the job resumes elsewhere).
//
//   PreemptionWatchOptions watch;
//   watch.provider = options.watch_preemption;
//   watch.interval = options.watch_interval;
//   PreemptionWatcher watcher(watch, [](const PreemptionNotice&) { request_stop("preemption notice"); });
//   run_the_job();  // the watcher stops and joins when it goes out of scope
//
// auto probes AWS, GCP and Azure (short timeouts, on the watcher's thread, so the job starts at
// once) and watches the first that answers; when none does it logs at debug level and stops. A
// named provider that does not answer gets one warning and is polled anyway.
// Thread-safety: construct and destroy on one thread; notice() and watching() from any thread.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "lifecycle/lifecycle_options.h"
#include "lifecycle/preemption_source.h"

namespace framelift::lifecycle {

struct PreemptionWatchOptions {
  WatchProvider provider = WatchProvider::Off;  // Off: no thread, never a notice
  std::chrono::milliseconds interval{std::chrono::seconds(1)};  // between polls
  // Replaces every provider's metadata address ("http://127.0.0.1:8080"). Empty: the
  // FRAMELIFT_METADATA_URL environment variable when set, else the documented addresses.
  std::string metadata_url;
  // Per request. Also bounds how long auto-detection takes where no cloud answers.
  std::chrono::milliseconds request_timeout{800};
};

class PreemptionWatcher {
 public:
  // Called once, on the watcher's thread, with the first notice. Keep it short and thread-safe
  // (set the flag SIGTERM sets); the watcher stops polling after it returns.
  using Callback = std::function<void(const PreemptionNotice&)>;

  PreemptionWatcher(PreemptionWatchOptions options, Callback on_notice);
  // Stops polling and joins: returns within about 50 ms plus the callback's running time, even
  // while a request is in flight.
  ~PreemptionWatcher();
  PreemptionWatcher(const PreemptionWatcher&) = delete;
  PreemptionWatcher& operator=(const PreemptionWatcher&) = delete;

  // The notice, once one has arrived (the callback may still be running).
  std::optional<PreemptionNotice> notice() const;
  // The provider being polled ("aws", "gcp", "azure"); empty while auto is still probing, when
  // no provider answered, and for Off.
  std::string watching() const;

 private:
  void run();
  void watch();
  std::unique_ptr<PreemptionSource> choose_source();
  bool sleep_for(std::chrono::milliseconds duration);  // false when stopping

  PreemptionWatchOptions options_;
  Callback on_notice_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<PreemptionNotice> notice_;
  std::string watching_;
  std::thread thread_;  // last: starts after every other member exists
};

}  // namespace framelift::lifecycle
