#include "net/http_request.h"

#include <curl/curl.h>

#include <cctype>
#include <memory>
#include <mutex>

#include "util/error.h"
#include "util/str.h"

namespace framelift::net {
namespace {

struct EasyCleanup {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct MultiCleanup {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct SlistFree {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using EasyPtr = std::unique_ptr<CURL, EasyCleanup>;
using MultiPtr = std::unique_ptr<CURLM, MultiCleanup>;
using SlistPtr = std::unique_ptr<curl_slist, SlistFree>;

void init_curl_once() {
  // Paired with http_download's own call: libcurl counts initialisations, and since 7.84 (this
  // build reports "threadsafe") concurrent first calls are safe too.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool equal_nocase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

struct Collect {
  HttpResponse& response;
  std::size_t limit;
  bool too_big = false;

  static size_t on_body(char* data, size_t size, size_t count, void* self_ptr) {
    auto& self = *static_cast<Collect*>(self_ptr);
    size_t bytes = size * count;
    if (self.response.body.size() + bytes > self.limit) {
      self.too_big = true;
      return 0;
    }
    self.response.body.append(data, bytes);
    return bytes;
  }

  static size_t on_header(char* data, size_t size, size_t count, void* self_ptr) {
    auto& self = *static_cast<Collect*>(self_ptr);
    std::string_view line(data, size * count);
    if (line.size() >= 5 && equal_nocase(line.substr(0, 5), "http/")) {
      self.response.headers.clear();  // a new response (after 100 Continue): only the last counts
    } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
      self.response.headers.emplace_back(std::string(trim(line.substr(0, colon))),
                                         std::string(trim(line.substr(colon + 1))));
    }
    return size * count;
  }
};

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (equal_nocase(key, name)) return value;
  return {};
}

HttpResponse http_request(const HttpRequest& request) {
  init_curl_once();
  EasyPtr easy(curl_easy_init());
  MultiPtr multi(curl_multi_init());
  if (!easy || !multi) throw Error(ErrorKind::Resource, str(request.url, ": cannot initialise libcurl"));

  HttpResponse response;
  Collect collect{response, request.max_body_bytes};
  char errbuf[CURL_ERROR_SIZE] = {};
  SlistPtr headers;
  for (const auto& [name, value] : request.headers) {
    curl_slist* appended = curl_slist_append(headers.get(), str(name, ": ", value).c_str());
    if (!appended) throw Error(ErrorKind::Resource, str(request.url, ": out of memory for request headers"));
    (void)headers.release();
    headers.reset(appended);
  }

  CURL* curl = easy.get();
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM: callers run on background threads
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "framelift");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, long(request.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, long(request.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect::on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &collect);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Collect::on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &collect);
  if (request.bypass_proxy) curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  if (request.method == HttpMethod::Head) curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (request.method == HttpMethod::Put) {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
    // Always a body, even an empty one, so that a Content-Length goes out: some servers refuse a
    // PUT without one (411) rather than assume zero.
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.size()));
  }

  // The multi interface rather than curl_easy_perform: it lets a cancel take effect within one
  // short poll instead of waiting for libcurl's roughly once-a-second progress callback.
  curl_multi_add_handle(multi.get(), curl);
  int running = 1;
  bool cancelled = false;
  while (running > 0) {
    if (curl_multi_perform(multi.get(), &running) != CURLM_OK) break;
    if (running == 0) break;
    if (request.cancel && request.cancel->load()) {
      cancelled = true;
      break;
    }
    curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
  }
  CURLcode rc = CURLE_OK;
  bool finished = false;
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
    if (msg->msg == CURLMSG_DONE) {
      rc = msg->data.result;
      finished = true;
    }
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_multi_remove_handle(multi.get(), curl);

  if (cancelled) response.error = "cancelled";
  else if (!finished) response.error = "libcurl stopped without a result";
  else if (collect.too_big) response.error = str("answer larger than ", request.max_body_bytes, " bytes");
  else if (rc != CURLE_OK) response.error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
  if (!response.error.empty()) {
    // A half-received answer is no answer: callers must not act on a truncated body.
    response.status = 0;
    response.body.clear();
    response.headers.clear();
  }
  return response;
}

}  // namespace framelift::net
