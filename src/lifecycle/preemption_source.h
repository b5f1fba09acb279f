#pragma once
// One cloud's way of announcing that it is about to take the machine back, read from the
// provider's instance metadata service. PreemptionWatcher (preemption_watcher.h) polls a source
// from its background thread; each provider lives in its own .cpp:
//   aws_spot_source.cpp        IMDSv2 token, then spot/instance-action (404 until reclaimed)
//   gcp_preemption_source.cpp  computeMetadata/v1/instance/preempted ("TRUE" once preempted)
//   azure_events_source.cpp    metadata/scheduledevents (a Preempt or Terminate event)
// Thread-safety: a source is used by one thread at a time.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace framelift::lifecycle {

struct PreemptionNotice {
  std::string provider;  // "aws", "gcp", "azure"
  std::string detail;    // for the log: "spot instance-action terminate at 2025-01-01T12:00:00Z"
};

// Where and how a source talks to its metadata service.
struct MetadataEndpoint {
  // Scheme and host without a trailing slash: "http://169.254.169.254". Tests and unusual hosts
  // replace it (FRAMELIFT_METADATA_URL, see metadata_base_url).
  std::string base_url;
  std::chrono::milliseconds timeout{800};  // per request
  const std::atomic<bool>* cancel = nullptr;  // abandons a request in flight (watcher shutdown)
};

class PreemptionSource {
 public:
  virtual ~PreemptionSource() = default;
  virtual std::string_view name() const = 0;  // "aws", "gcp", "azure"
  // Whether this provider's metadata service answers here: used by --watch-preemption auto.
  // Must tell the providers apart (AWS and Azure share 169.254.169.254).
  virtual bool present() = 0;
  // One check. The notice once the provider has posted one; nullopt otherwise, including when
  // the service does not answer (a later poll may succeed). Never throws.
  virtual std::optional<PreemptionNotice> poll() = 0;
};

std::unique_ptr<PreemptionSource> make_aws_source(MetadataEndpoint endpoint);
std::unique_ptr<PreemptionSource> make_gcp_source(MetadataEndpoint endpoint);
std::unique_ptr<PreemptionSource> make_azure_source(MetadataEndpoint endpoint);

// The documented metadata address of each provider, unless FRAMELIFT_METADATA_URL (or
// `override_url`, when not empty) names another; a trailing slash is dropped.
inline constexpr std::string_view kAwsMetadataUrl = "http://169.254.169.254";
inline constexpr std::string_view kGcpMetadataUrl = "http://metadata.google.internal";
inline constexpr std::string_view kAzureMetadataUrl = "http://169.254.169.254";
std::string metadata_base_url(std::string_view documented, std::string_view override_url = {});

// The pure halves of the AWS and Azure sources, for tests. Bodies that are not the expected JSON
// give nullopt, never an exception: a metadata service is outside our control.
// {"action":"terminate","time":"2025-01-01T12:00:00Z"} -> "spot instance-action terminate at ...".
std::optional<std::string> describe_aws_instance_action(std::string_view body);
// The first event of type Preempt or Terminate: "Preempt event (NotBefore ...)". Other events
// (Freeze, Reboot, Redeploy) are maintenance the job survives.
std::optional<std::string> describe_azure_stop_event(std::string_view body);

}  // namespace framelift::lifecycle
