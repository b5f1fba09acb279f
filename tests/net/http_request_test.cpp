// http_request against the local test server (tests/support/http_server.py) and against ports
// where nobody answers: a request without an HTTP answer is a status 0, never an exception.
#include "net/http_request.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "local_http_server.h"
#include "silent_tcp_port.h"
#include "support/test_paths.h"

namespace fs = std::filesystem;
namespace ft = framelift::test;
using framelift::net::http_request;
using framelift::net::HttpMethod;
using framelift::net::HttpRequest;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

void write_file(const fs::path& path, const std::string& data) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

// Named fields by assignment: designated initializers would warn about every field left out.
HttpRequest get(const std::string& url, std::chrono::milliseconds timeout = 1000ms) {
  HttpRequest request;
  request.url = url;
  request.timeout = timeout;
  return request;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

TEST(HttpRequest, GetReturnsStatusBodyAndHeaders) {
  fs::path root = ft::temp_dir("http-request");
  write_file(root / "hello.txt", "hello\n");
  ft::LocalHttpServer server(root);
  auto response = http_request(get(server.url("hello.txt")));
  EXPECT_EQ(response.status, 200);
  EXPECT_TRUE(response.ok());
  EXPECT_EQ(response.body, "hello\n");
  EXPECT_EQ(response.header("content-length"), "6");  // names compare without case
  EXPECT_EQ(response.header("X-Absent"), "");
  EXPECT_TRUE(response.error.empty());
}

TEST(HttpRequest, HttpErrorIsAStatusNotAnException) {
  fs::path root = ft::temp_dir("http-request");
  ft::LocalHttpServer server(root);
  auto response = http_request(get(server.url("missing")));
  EXPECT_EQ(response.status, 404);
  EXPECT_FALSE(response.ok());
  EXPECT_EQ(response.body, "not found\n");
}

TEST(HttpRequest, PutSendsMethodAndHeaders) {
  fs::path root = ft::temp_dir("http-request");
  ft::LocalHttpServer server(root, {"--metadata", "aws"});
  HttpRequest request = get(server.url("latest/api/token"));
  request.method = HttpMethod::Put;
  // The mock refuses the token request without its header, so the 200 proves the header went out.
  EXPECT_EQ(http_request(request).status, 400);
  request.headers = {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}};
  auto response = http_request(request);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "framelift-test-token");
  EXPECT_NE(server.request_log().find("PUT /latest/api/token"), std::string::npos);
}

TEST(HttpRequest, HeadGetsStatusAndHeadersWithoutBody) {
  fs::path root = ft::temp_dir("http-request");
  write_file(root / "hello.txt", "hello\n");
  ft::LocalHttpServer server(root);
  HttpRequest request = get(server.url("hello.txt"));
  request.method = HttpMethod::Head;
  auto response = http_request(request);
  EXPECT_EQ(response.status, 200) << response.error;
  EXPECT_EQ(response.header("content-length"), "6");
  EXPECT_EQ(response.body, "");
  EXPECT_NE(server.request_log().find("HEAD /hello.txt"), std::string::npos) << server.request_log();
}

TEST(HttpRequest, RefusedConnectionIsStatusZeroWithAReason) {
  ft::SilentTcpPort closed(false);
  auto response = http_request(get(closed.base_url() + "/x", 500ms));
  EXPECT_EQ(response.status, 0);
  EXPECT_FALSE(response.error.empty());
}

TEST(HttpRequest, SilentServerTimesOut) {
  ft::SilentTcpPort silent(true);
  auto start = Clock::now();
  auto response = http_request(get(silent.base_url() + "/x", 300ms));
  EXPECT_EQ(response.status, 0);
  EXPECT_FALSE(response.error.empty());
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST(HttpRequest, CancelAbandonsARequestInFlight) {
  ft::SilentTcpPort silent(true);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(150ms);
    cancel = true;
  });
  auto start = Clock::now();
  HttpRequest request = get(silent.base_url() + "/x", 20s);
  request.cancel = &cancel;
  auto response = http_request(request);
  double took = seconds_since(start);
  canceller.join();
  EXPECT_EQ(response.status, 0);
  EXPECT_EQ(response.error, "cancelled");
  EXPECT_LT(took, 1.0);
}

TEST(HttpRequest, OversizedBodyIsNoAnswer) {
  fs::path root = ft::temp_dir("http-request");
  write_file(root / "big", std::string(5000, 'x'));
  ft::LocalHttpServer server(root);
  HttpRequest request = get(server.url("big"));
  request.max_body_bytes = 1000;
  auto response = http_request(request);
  EXPECT_EQ(response.status, 0);
  EXPECT_TRUE(response.body.empty());
  EXPECT_NE(response.error.find("larger than 1000"), std::string::npos) << response.error;
}

}  // namespace
