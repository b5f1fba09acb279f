// The pure halves of the preemption sources: notice bodies and metadata addresses. Whatever a
// metadata service sends, parsing gives a description or nothing, never an exception.
#include "lifecycle/preemption_source.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace framelift::lifecycle;

namespace {

TEST(AwsInstanceAction, DescribesActionAndTime) {
  EXPECT_EQ(describe_aws_instance_action(R"({"action": "stop", "time": "2017-09-18T08:22:00Z"})"),
            "spot instance-action stop at 2017-09-18T08:22:00Z");
  EXPECT_EQ(describe_aws_instance_action(R"({"action": "hibernate"})"), "spot instance-action hibernate");
}

TEST(AwsInstanceAction, AnythingElseIsNothing) {
  for (const char* body : {"", "not json", "[]", "{}", R"({"action": 3})", "<html>404</html>"})
    EXPECT_FALSE(describe_aws_instance_action(body)) << body;
}

TEST(AzureScheduledEvents, PreemptAndTerminateMeanStop) {
  EXPECT_EQ(describe_azure_stop_event(
                R"({"DocumentIncarnation": 1, "Events": [{"EventType": "Preempt", "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT"}]})"),
            "Preempt event (NotBefore Mon, 19 Sep 2016 18:29:47 GMT)");
  EXPECT_EQ(describe_azure_stop_event(R"({"Events": [{"EventType": "Freeze"}, {"EventType": "Terminate"}]})"),
            "Terminate event");
}

TEST(AzureScheduledEvents, MaintenanceAndGarbageAreNothing) {
  for (const char* body : {R"({"DocumentIncarnation": 0, "Events": []})",
                           R"({"Events": [{"EventType": "Freeze"}, {"EventType": "Reboot"}, {"EventType": "Redeploy"}]})",
                           R"({"Events": {"EventType": "Preempt"}})", R"({"Events": [3, null]})", "", "{", "[]"})
    EXPECT_FALSE(describe_azure_stop_event(body)) << body;
}

TEST(MetadataBaseUrl, OverrideThenEnvironmentThenDocumented) {
  ::unsetenv("FRAMELIFT_METADATA_URL");
  EXPECT_EQ(metadata_base_url(kGcpMetadataUrl), "http://metadata.google.internal");
  ::setenv("FRAMELIFT_METADATA_URL", "http://127.0.0.1:9/", 1);
  EXPECT_EQ(metadata_base_url(kAwsMetadataUrl), "http://127.0.0.1:9");
  EXPECT_EQ(metadata_base_url(kAwsMetadataUrl, "http://10.0.0.1:8080//"), "http://10.0.0.1:8080");
  ::unsetenv("FRAMELIFT_METADATA_URL");
}

}  // namespace
