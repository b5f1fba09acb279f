#include "lifecycle/preemption_watcher.h"

#include <vector>

#include "util/log.h"

namespace framelift::lifecycle {
namespace {

std::unique_ptr<PreemptionSource> make_source(WatchProvider provider, const PreemptionWatchOptions& options,
                                              const std::atomic<bool>* cancel) {
  auto endpoint = [&](std::string_view documented) {
    return MetadataEndpoint{metadata_base_url(documented, options.metadata_url), options.request_timeout, cancel};
  };
  switch (provider) {
    case WatchProvider::Aws: return make_aws_source(endpoint(kAwsMetadataUrl));
    case WatchProvider::Gcp: return make_gcp_source(endpoint(kGcpMetadataUrl));
    case WatchProvider::Azure: return make_azure_source(endpoint(kAzureMetadataUrl));
    case WatchProvider::Off:
    case WatchProvider::Auto: break;
  }
  return nullptr;
}

std::string_view display_name(std::string_view provider) {
  if (provider == "aws") return "AWS";
  if (provider == "gcp") return "GCP";
  if (provider == "azure") return "Azure";
  return provider;
}

}  // namespace

PreemptionWatcher::PreemptionWatcher(PreemptionWatchOptions options, Callback on_notice)
    : options_(std::move(options)), on_notice_(std::move(on_notice)) {
  if (options_.provider != WatchProvider::Off) thread_ = std::thread([this] { run(); });
}

PreemptionWatcher::~PreemptionWatcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<PreemptionNotice> PreemptionWatcher::notice() const {
  std::lock_guard lock(mutex_);
  return notice_;
}

std::string PreemptionWatcher::watching() const {
  std::lock_guard lock(mutex_);
  return watching_;
}

bool PreemptionWatcher::sleep_for(std::chrono::milliseconds duration) {
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, duration, [this] { return stop_.load(); });
}

std::unique_ptr<PreemptionSource> PreemptionWatcher::choose_source() {
  if (options_.provider != WatchProvider::Auto) {
    auto source = make_source(options_.provider, options_, &stop_);
    // Polling on regardless (the service may come up later), but a user who named the wrong
    // cloud should hear that no notice can come.
    if (!source->present() && !stop_)
      log::warn("--watch-preemption ", source->name(), ": the ", display_name(source->name()),
                " metadata service does not answer here; polling anyway");
    return source;
  }
  // AWS before Azure: both live at 169.254.169.254, and each source's probe only accepts its own
  // provider's answers, so the order matters only for speed.
  for (WatchProvider candidate : {WatchProvider::Aws, WatchProvider::Gcp, WatchProvider::Azure}) {
    if (stop_) return nullptr;
    auto source = make_source(candidate, options_, &stop_);
    if (source->present()) return source;
  }
  if (!stop_)
    log::debug("--watch-preemption auto: no cloud metadata service answered (AWS, GCP, Azure); not watching");
  return nullptr;
}

void PreemptionWatcher::run() {
  // An exception must not leave the thread (std::terminate); losing the watcher must not lose the job.
  try {
    watch();
  } catch (const std::exception& e) {
    log::warn("--watch-preemption: watcher stopped (", e.what(), "); the job continues unwatched");
  }
}

void PreemptionWatcher::watch() {
  std::unique_ptr<PreemptionSource> source = choose_source();
  if (!source) return;
  {
    std::lock_guard lock(mutex_);
    watching_ = std::string(source->name());
  }
  log::debug("watching ", display_name(source->name()), " metadata for preemption notices every ",
             options_.interval.count(), " ms");
  do {
    std::optional<PreemptionNotice> notice = source->poll();
    if (stop_) return;  // a poll cut short by shutdown proves nothing
    if (notice) {
      {
        std::lock_guard lock(mutex_);
        notice_ = notice;
      }
      log::warn(display_name(notice->provider), " preemption notice: ", notice->detail,
                "; stopping the job as on SIGTERM (finished work is kept)");
      if (on_notice_) on_notice_(*notice);
      return;
    }
  } while (sleep_for(options_.interval));
}

}  // namespace framelift::lifecycle
