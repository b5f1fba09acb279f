#pragma once
// One small HTTP request with libcurl, for talking to services rather than fetching files: cloud
// metadata endpoints, status APIs. Unlike download_file, a request that gets no HTTP answer is a
// result, not an exception: callers such as the preemption watchers poll endpoints that simply do
// not exist on most machines, and "nobody answered" is what they need to know.
#include <atomic>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace framelift::net {

// Head: the status and headers only (a reachability check: `framelift doctor`).
enum class HttpMethod { Get, Put, Head };

struct HttpRequest {
  HttpMethod method = HttpMethod::Get;
  std::string url;  // http or https; redirects are not followed
  std::vector<std::pair<std::string, std::string>> headers;  // name, value
  std::string body;  // sent with PUT (may be empty); ignored for GET
  // Limit for the whole request, connecting included. Short by default: a metadata service on the
  // local link answers in milliseconds or not at all.
  std::chrono::milliseconds timeout{1000};
  // Skips any http_proxy/https_proxy from the environment. Link-local metadata addresses must
  // never be sent through a proxy (the proxy would answer for its own host, or leak the request).
  bool bypass_proxy = false;
  // Bodies beyond this are cut off and the request reported as failed, so that a URL that points
  // somewhere unexpected cannot fill memory.
  std::size_t max_body_bytes = 1 << 20;
  // Set from any thread to abandon the request within about 50 ms (status 0, error "cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

struct HttpResponse {
  long status = 0;    // HTTP status; 0 when no HTTP answer came (refused, timeout, DNS, cancelled)
  std::string body;
  std::string error;  // why status is 0 (libcurl's message); empty when an answer came
  std::vector<std::pair<std::string, std::string>> headers;  // of the answer, names as sent

  bool ok() const { return status >= 200 && status < 300; }
  // Value of the first header with this name, compared without case; empty when absent.
  std::string header(std::string_view name) const;
};

// Sends the request and waits for the whole answer. Never throws for network or HTTP failures
// (see HttpResponse::status and error); throws framelift::Error(Resource) only when libcurl
// itself cannot be set up. Safe to call from several threads at once.
HttpResponse http_request(const HttpRequest& request);

}  // namespace framelift::net
