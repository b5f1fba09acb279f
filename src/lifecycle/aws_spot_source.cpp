// AWS EC2 spot interruption notices, two minutes ahead (hibernation: none ahead). Instance metadata
// answers 404 at /latest/meta-data/spot/instance-action until the instance is reclaimed, then
// {"action": "terminate|stop|hibernate", "time": "..."}. IMDSv2 first (a session token from a PUT,
// required on instances that enforce it), IMDSv1 when the PUT is refused.
#include <nlohmann/json.hpp>

#include <cctype>

#include "lifecycle/metadata_request.h"
#include "lifecycle/preemption_source.h"
#include "util/log.h"

namespace framelift::lifecycle {
namespace {

using Clock = std::chrono::steady_clock;
using Headers = std::vector<std::pair<std::string, std::string>>;

// A token lives 6 hours (the longest IMDS grants); renewed a little early, and at once on a 401.
constexpr auto kTokenTtl = std::chrono::hours(6);
constexpr auto kTokenMargin = std::chrono::minutes(5);

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

class AwsSpotSource final : public PreemptionSource {
 public:
  explicit AwsSpotSource(MetadataEndpoint endpoint) : endpoint_(std::move(endpoint)) {}

  std::string_view name() const override { return "aws"; }

  bool present() override {
    if (request_token() == TokenResult::Got) return true;
    // An IMDSv1-only instance refuses the PUT but lists its metadata. Azure, on the same address,
    // answers neither without its own header.
    net::HttpResponse listing = metadata_request(endpoint_, net::HttpMethod::Get, "/latest/meta-data/", {});
    if (!listing.ok()) return false;
    imdsv1_ = true;
    return true;
  }

  std::optional<PreemptionNotice> poll() override {
    if (!imdsv1_ && (token_.empty() || Clock::now() >= token_expiry_) && request_token() == TokenResult::NoAnswer)
      return std::nullopt;
    net::HttpResponse action =
        metadata_request(endpoint_, net::HttpMethod::Get, "/latest/meta-data/spot/instance-action", auth());
    if (action.status == 401 && !imdsv1_) token_.clear();  // expired or revoked: a new one next poll
    if (action.ok()) {
      std::optional<std::string> detail = describe_aws_instance_action(action.body);
      return PreemptionNotice{"aws", detail ? *detail : "spot instance-action: " + trimmed(action.body).substr(0, 200)};
    }
    check_rebalance();
    return std::nullopt;
  }

 private:
  enum class TokenResult { Got, Refused, NoAnswer };

  TokenResult request_token() {
    net::HttpResponse r = metadata_request(endpoint_, net::HttpMethod::Put, "/latest/api/token",
                                           {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}});
    if (r.status == 0) return TokenResult::NoAnswer;
    std::string token = trimmed(r.body);
    if (r.ok() && !token.empty()) {
      token_ = std::move(token);
      token_expiry_ = Clock::now() + kTokenTtl - kTokenMargin;
      imdsv1_ = false;
      return TokenResult::Got;
    }
    if (!imdsv1_) log::debug("AWS metadata: token request answered HTTP ", r.status, "; using IMDSv1");
    imdsv1_ = true;
    return TokenResult::Refused;
  }

  Headers auth() const {
    if (imdsv1_ || token_.empty()) return {};
    return {{"X-aws-ec2-metadata-token", token_}};
  }

  // A rebalance recommendation says the instance is at elevated risk, often minutes before the
  // real notice. Worth a line in the log; not a reason to stop work that may yet finish.
  void check_rebalance() {
    if (rebalance_logged_) return;
    net::HttpResponse r = metadata_request(endpoint_, net::HttpMethod::Get,
                                           "/latest/meta-data/events/recommendations/rebalance", auth());
    if (!r.ok()) return;
    rebalance_logged_ = true;
    auto json = nlohmann::json::parse(r.body, nullptr, false);
    std::string when = json.is_object() && json.contains("noticeTime") && json["noticeTime"].is_string()
                           ? " (" + json["noticeTime"].get<std::string>() + ")"
                           : "";
    log::info("AWS: rebalance recommendation", when,
              ": this spot instance is at elevated risk of interruption; the job continues");
  }

  MetadataEndpoint endpoint_;
  std::string token_;
  Clock::time_point token_expiry_{};
  bool imdsv1_ = false;
  bool rebalance_logged_ = false;
};

}  // namespace

std::optional<std::string> describe_aws_instance_action(std::string_view body) {
  auto json = nlohmann::json::parse(body, nullptr, false);
  if (!json.is_object() || !json.contains("action") || !json["action"].is_string()) return std::nullopt;
  std::string text = "spot instance-action " + json["action"].get<std::string>();
  if (json.contains("time") && json["time"].is_string()) text += " at " + json["time"].get<std::string>();
  return text;
}

std::unique_ptr<PreemptionSource> make_aws_source(MetadataEndpoint endpoint) {
  return std::make_unique<AwsSpotSource>(std::move(endpoint));
}

}  // namespace framelift::lifecycle
