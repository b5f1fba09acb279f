// PreemptionWatcher against tests/support/http_server.py playing each cloud's metadata service
// (--metadata): a test posts a notice by writing the file the provider's endpoint serves. The mock
// refuses requests without the provider's required header, so every notice seen here also proves
// the header was sent.
#include "lifecycle/preemption_watcher.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <thread>

#include "net/local_http_server.h"
#include "net/silent_tcp_port.h"
#include "support/test_paths.h"
#include "util/fs.h"

namespace fs = std::filesystem;
namespace ft = framelift::test;
using namespace framelift::lifecycle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Written whole (temp + rename), as the server must never serve half a notice.
void post(const fs::path& root, const std::string& path, const std::string& content) {
  fs::create_directories((root / path).parent_path());
  framelift::write_file_atomic(root / path, content);
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 5s) {
  auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Counts callbacks and keeps the last notice.
struct Recorder {
  std::atomic<int> calls{0};
  std::mutex mutex;
  PreemptionNotice last;

  PreemptionWatcher::Callback callback() {
    return [this](const PreemptionNotice& notice) {
      std::lock_guard lock(mutex);
      last = notice;
      ++calls;
    };
  }
};

PreemptionWatchOptions watch(WatchProvider provider, const std::string& base_url) {
  PreemptionWatchOptions options;
  options.provider = provider;
  options.interval = 100ms;
  options.metadata_url = base_url;
  options.request_timeout = 800ms;
  return options;
}

std::string base_of(const ft::LocalHttpServer& server) { return server.url(""); }

// The metadata each provider shows while nothing is wrong.
void quiet_metadata(const fs::path& root, const std::string& provider) {
  if (provider == "aws") {
    post(root, "latest/meta-data/instance-id", "i-0123456789abcdef0");
  } else if (provider == "gcp") {
    post(root, "computeMetadata/v1/instance/preempted", "FALSE");
  } else {
    post(root, "metadata/instance", R"({"compute": {"vmId": "test"}})");
    post(root, "metadata/scheduledevents", R"({"DocumentIncarnation": 1, "Events": []})");
  }
}

void post_notice(const fs::path& root, const std::string& provider) {
  if (provider == "aws") {
    post(root, "latest/meta-data/spot/instance-action", R"({"action": "terminate", "time": "2025-01-01T12:02:00Z"})");
  } else if (provider == "gcp") {
    post(root, "computeMetadata/v1/instance/preempted", "TRUE");
  } else {
    post(root, "metadata/scheduledevents",
         R"({"DocumentIncarnation": 2, "Events": [{"EventId": "A1", "EventType": "Preempt", "ResourceType": "VirtualMachine",
             "Resources": ["vm1"], "EventStatus": "Scheduled", "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT"}]})");
  }
}

// No callback while quiet, one callback soon after the notice, and no second one later.
void expect_quiet_then_one_notice(const fs::path& root, PreemptionWatcher& watcher, Recorder& recorder,
                                  const std::string& provider) {
  ASSERT_TRUE(eventually([&] { return watcher.watching() == provider; })) << "watching: " << watcher.watching();
  std::this_thread::sleep_for(500ms);  // several polls
  EXPECT_EQ(recorder.calls, 0);
  EXPECT_FALSE(watcher.notice());

  post_notice(root, provider);
  ASSERT_TRUE(eventually([&] { return recorder.calls > 0; })) << "no notice from " << provider;
  std::this_thread::sleep_for(400ms);  // the notice stays posted; the callback must not repeat
  EXPECT_EQ(recorder.calls, 1);
  ASSERT_TRUE(watcher.notice());
  EXPECT_EQ(watcher.notice()->provider, provider);
  std::lock_guard lock(recorder.mutex);
  EXPECT_EQ(recorder.last.provider, provider);
}

class EachProvider : public ::testing::TestWithParam<std::string> {};

TEST_P(EachProvider, NamedProviderCallsBackOnceAfterTheNotice) {
  const std::string provider = GetParam();
  fs::path root = ft::temp_dir("metadata");
  quiet_metadata(root, provider);
  ft::LocalHttpServer server(root, {"--metadata", provider});
  Recorder recorder;
  WatchProvider which = parse_watch_provider(provider);
  PreemptionWatcher watcher(watch(which, base_of(server)), recorder.callback());
  expect_quiet_then_one_notice(root, watcher, recorder, provider);
}

TEST_P(EachProvider, AutoFindsTheProviderThatAnswers) {
  const std::string provider = GetParam();
  fs::path root = ft::temp_dir("metadata");
  quiet_metadata(root, provider);
  ft::LocalHttpServer server(root, {"--metadata", provider});
  Recorder recorder;
  PreemptionWatcher watcher(watch(WatchProvider::Auto, base_of(server)), recorder.callback());
  expect_quiet_then_one_notice(root, watcher, recorder, provider);
}

INSTANTIATE_TEST_SUITE_P(Lifecycle, EachProvider, ::testing::Values("aws", "gcp", "azure"),
                         [](const auto& info) { return info.param; });

TEST(PreemptionWatcher, AwsNoticeCarriesActionAndTime) {
  fs::path root = ft::temp_dir("metadata");
  quiet_metadata(root, "aws");
  ft::LocalHttpServer server(root, {"--metadata", "aws"});
  Recorder recorder;
  PreemptionWatcher watcher(watch(WatchProvider::Aws, base_of(server)), recorder.callback());
  post_notice(root, "aws");
  ASSERT_TRUE(eventually([&] { return recorder.calls > 0; }));
  EXPECT_EQ(watcher.notice()->detail, "spot instance-action terminate at 2025-01-01T12:02:00Z");
  // IMDSv2: one token for many polls, not one per poll.
  std::string log = server.request_log();
  EXPECT_NE(log.find("PUT /latest/api/token"), std::string::npos);
  EXPECT_EQ(log.find("PUT /latest/api/token"), log.rfind("PUT /latest/api/token")) << log;
}

TEST(PreemptionWatcher, AwsFallsBackToImdsV1WhenTheTokenIsRefused) {
  fs::path root = ft::temp_dir("metadata");
  quiet_metadata(root, "aws");
  ft::LocalHttpServer server(root, {"--metadata", "aws", "--imdsv1"});
  Recorder recorder;
  PreemptionWatcher watcher(watch(WatchProvider::Auto, base_of(server)), recorder.callback());
  expect_quiet_then_one_notice(root, watcher, recorder, "aws");
}

TEST(PreemptionWatcher, AwsRebalanceRecommendationIsNotAStop) {
  fs::path root = ft::temp_dir("metadata");
  quiet_metadata(root, "aws");
  post(root, "latest/meta-data/events/recommendations/rebalance", R"({"noticeTime": "2025-01-01T12:00:00Z"})");
  ft::LocalHttpServer server(root, {"--metadata", "aws"});
  Recorder recorder;
  PreemptionWatcher watcher(watch(WatchProvider::Aws, base_of(server)), recorder.callback());
  ASSERT_TRUE(eventually([&] { return server.request_log().find("rebalance") != std::string::npos; }));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(recorder.calls, 0);
}

TEST(PreemptionWatcher, AzureMaintenanceEventsAreNotAStop) {
  fs::path root = ft::temp_dir("metadata");
  quiet_metadata(root, "azure");
  post(root, "metadata/scheduledevents",
       R"({"DocumentIncarnation": 2, "Events": [{"EventId": "F1", "EventType": "Freeze", "EventStatus": "Scheduled"}]})");
  ft::LocalHttpServer server(root, {"--metadata", "azure"});
  Recorder recorder;
  PreemptionWatcher watcher(watch(WatchProvider::Azure, base_of(server)), recorder.callback());
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(recorder.calls, 0);
  post(root, "metadata/scheduledevents",
       R"({"DocumentIncarnation": 3, "Events": [{"EventId": "T1", "EventType": "Terminate", "NotBefore": "soon"}]})");
  ASSERT_TRUE(eventually([&] { return recorder.calls > 0; }));
  EXPECT_EQ(watcher.notice()->detail, "Terminate event (NotBefore soon)");
}

TEST(PreemptionWatcher, EnvironmentVariableReplacesTheMetadataAddress) {
  fs::path root = ft::temp_dir("metadata");
  quiet_metadata(root, "gcp");
  ft::LocalHttpServer server(root, {"--metadata", "gcp"});
  ::setenv("FRAMELIFT_METADATA_URL", base_of(server).c_str(), 1);
  Recorder recorder;
  {
    PreemptionWatcher watcher(watch(WatchProvider::Gcp, ""), recorder.callback());
    post_notice(root, "gcp");
    EXPECT_TRUE(eventually([&] { return recorder.calls > 0; }));
  }
  ::unsetenv("FRAMELIFT_METADATA_URL");
}

TEST(PreemptionWatcher, NothingListeningMeansNoCallbackAndAFastExit) {
  ft::SilentTcpPort closed(false);
  for (WatchProvider provider : {WatchProvider::Auto, WatchProvider::Aws, WatchProvider::Gcp, WatchProvider::Azure}) {
    Recorder recorder;
    Clock::time_point stopping;
    {
      PreemptionWatcher watcher(watch(provider, closed.base_url()), recorder.callback());
      std::this_thread::sleep_for(300ms);
      EXPECT_EQ(watcher.watching(), provider == WatchProvider::Auto ? "" : watch_provider_name(provider));
      stopping = Clock::now();
    }
    EXPECT_LT(seconds_since(stopping), 0.5) << watch_provider_name(provider);
    EXPECT_EQ(recorder.calls, 0) << watch_provider_name(provider);
  }
}

TEST(PreemptionWatcher, DestructorCancelsARequestThatHangs) {
  ft::SilentTcpPort silent(true);  // accepts, never answers
  for (WatchProvider provider : {WatchProvider::Auto, WatchProvider::Aws}) {
    PreemptionWatchOptions options = watch(provider, silent.base_url());
    options.request_timeout = 30s;  // only the cancel can end the request in time
    Recorder recorder;
    Clock::time_point stopping;
    {
      PreemptionWatcher watcher(options, recorder.callback());
      std::this_thread::sleep_for(200ms);
      stopping = Clock::now();
    }
    EXPECT_LT(seconds_since(stopping), 0.5) << watch_provider_name(provider);
    EXPECT_EQ(recorder.calls, 0);
  }
}

TEST(PreemptionWatcher, OffStartsNothing) {
  Recorder recorder;
  PreemptionWatcher watcher(watch(WatchProvider::Off, "http://127.0.0.1:1"), recorder.callback());
  EXPECT_EQ(watcher.watching(), "");
  EXPECT_FALSE(watcher.notice());
}

}  // namespace
