// Azure Scheduled Events: a Spot VM eviction is a "Preempt" event at least 30 s ahead; a scale-set
// "Terminate" (when terminate notifications are on) 5-15 minutes ahead. Both mean stop. The other
// event types (Freeze, Reboot, Redeploy) pause or move the VM and the job survives them. The events
// are read only, never acknowledged: approving one would only make the eviction come sooner.
#include <nlohmann/json.hpp>

#include "lifecycle/metadata_request.h"
#include "lifecycle/preemption_source.h"

namespace framelift::lifecycle {
namespace {

constexpr std::string_view kEventsPath = "/metadata/scheduledevents?api-version=2020-07-01";
// Scheduled Events may take minutes to answer its very first call (the service is enabled by
// it), so auto-detection asks the instance endpoint, which answers at once.
constexpr std::string_view kInstancePath = "/metadata/instance?api-version=2021-02-01";

std::string string_field(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

class AzureEventsSource final : public PreemptionSource {
 public:
  explicit AzureEventsSource(MetadataEndpoint endpoint) : endpoint_(std::move(endpoint)) {}

  std::string_view name() const override { return "azure"; }

  bool present() override {
    net::HttpResponse r = metadata_request(endpoint_, net::HttpMethod::Get, kInstancePath, {{"Metadata", "true"}});
    return r.ok() && nlohmann::json::parse(r.body, nullptr, false).is_object();
  }

  std::optional<PreemptionNotice> poll() override {
    net::HttpResponse r = metadata_request(endpoint_, net::HttpMethod::Get, kEventsPath, {{"Metadata", "true"}});
    if (!r.ok()) return std::nullopt;
    std::optional<std::string> detail = describe_azure_stop_event(r.body);
    if (!detail) return std::nullopt;
    return PreemptionNotice{"azure", *detail};
  }

 private:
  MetadataEndpoint endpoint_;
};

}  // namespace

std::optional<std::string> describe_azure_stop_event(std::string_view body) {
  auto json = nlohmann::json::parse(body, nullptr, false);
  if (!json.is_object()) return std::nullopt;
  auto events = json.find("Events");
  if (events == json.end() || !events->is_array()) return std::nullopt;
  for (const auto& event : *events) {
    if (!event.is_object()) continue;
    std::string type = string_field(event, "EventType");
    if (type != "Preempt" && type != "Terminate") continue;
    std::string text = type + " event";
    std::string not_before = string_field(event, "NotBefore");
    if (!not_before.empty()) text += " (NotBefore " + not_before + ")";
    return text;
  }
  return std::nullopt;
}

std::unique_ptr<PreemptionSource> make_azure_source(MetadataEndpoint endpoint) {
  return std::make_unique<AzureEventsSource>(std::move(endpoint));
}

}  // namespace framelift::lifecycle
