// Google Compute Engine spot and preemptible VMs: about 30 s between the notice and the stop. The
// metadata value instance/preempted reads "FALSE" until the VM is preempted, then "TRUE". Plain
// polling rather than ?wait_for_change=true: a hanging request would delay watcher shutdown, and
// one short GET a second costs nothing.
#include "lifecycle/metadata_request.h"
#include "lifecycle/preemption_source.h"

namespace framelift::lifecycle {
namespace {

constexpr std::string_view kPreemptedPath = "/computeMetadata/v1/instance/preempted";

// The server may end the value with a newline; anything but TRUE/FALSE is not GCE.
std::string_view value_of(const std::string& body) {
  std::string_view v(body);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.remove_suffix(1);
  return v;
}

class GcpPreemptionSource final : public PreemptionSource {
 public:
  explicit GcpPreemptionSource(MetadataEndpoint endpoint) : endpoint_(std::move(endpoint)) {}

  std::string_view name() const override { return "gcp"; }

  bool present() override {
    net::HttpResponse r = get();
    return r.ok() && (value_of(r.body) == "TRUE" || value_of(r.body) == "FALSE");
  }

  std::optional<PreemptionNotice> poll() override {
    net::HttpResponse r = get();
    if (r.ok() && value_of(r.body) == "TRUE") return PreemptionNotice{"gcp", "instance/preempted is TRUE"};
    return std::nullopt;
  }

 private:
  // Without Metadata-Flavor the server refuses (403): the header proves the request is not a
  // forwarded browser request.
  net::HttpResponse get() {
    return metadata_request(endpoint_, net::HttpMethod::Get, kPreemptedPath, {{"Metadata-Flavor", "Google"}});
  }

  MetadataEndpoint endpoint_;
};

}  // namespace

std::unique_ptr<PreemptionSource> make_gcp_source(MetadataEndpoint endpoint) {
  return std::make_unique<GcpPreemptionSource>(std::move(endpoint));
}

}  // namespace framelift::lifecycle
