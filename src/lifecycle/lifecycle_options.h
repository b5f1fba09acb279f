#pragma once
// What a job does about the machine it runs on: watch for the cloud taking it back, run the
// user's hooks at the end, shut the machine down, and show what the run costs. A plain struct so
// that the job driver can hold it and the CLI can fill it; docs/lifecycle.md has the full story.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace framelift::lifecycle {

// --watch-preemption. Off: no watcher thread at all.
enum class WatchProvider { Off, Aws, Gcp, Azure, Auto };

struct LifecycleOptions {
  WatchProvider watch_preemption = WatchProvider::Off;
  // Between two metadata polls. AWS recommends checking every 5 s; the shortest notice we handle
  // (GCP and Azure, 30 s) leaves room for a second.
  std::chrono::milliseconds watch_interval{std::chrono::seconds(1)};
  std::string on_complete;  // --on-complete: /bin/sh -c command; empty: none
  std::string on_fail;      // --on-fail: run when the job failed or was interrupted; empty: none
  bool shutdown_when_done = false;  // --shutdown-when-done: only after the output is verified
  // --shutdown-command; empty: $FRAMELIFT_SHUTDOWN_COMMAND, else "shutdown -h now"
  // (see resolve_shutdown_command in hooks.h).
  std::string shutdown_command;
  std::optional<double> hourly_price;  // --hourly-price, USD per hour; unset: no cost line
};

// "aws" | "gcp" | "azure" | "auto" | "off"; throws Error(Usage) naming --watch-preemption otherwise.
WatchProvider parse_watch_provider(std::string_view name);
// The name parse_watch_provider accepts for `provider`.
std::string_view watch_provider_name(WatchProvider provider);
// A non-negative finite number of USD per hour ("0.79", "$0.79"); throws Error(Usage) naming
// --hourly-price otherwise.
double parse_hourly_price(std::string_view text);

}  // namespace framelift::lifecycle
