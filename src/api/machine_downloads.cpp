// The network part of machine_report(): whether the hosts the catalog downloads models from
// answer. Any HTTP answer counts (a 403 or 404 for "/" still proves the route and TLS work); no
// answer within the timeout is what would make `models install` fail here.
#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <set>

#include "api/machine_parts.h"
#include "library/catalog.h"
#include "library/locations.h"
#include "net/http_request.h"
#include "util/error.h"

namespace framelift::api {
namespace {

// "https://github.com/xinntao/..." -> "https://github.com"; "" for what is not http(s).
std::string origin_of(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "";
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return "";
  return url.substr(0, url.find_first_of("/?#", scheme_end + 3));
}

// Catalog models per download origin. Web pages (sources a user reads) are no downloads.
std::map<std::string, int> models_per_origin(const library::Catalog& catalog) {
  std::map<std::string, int> counts;
  for (const auto& model : catalog.models()) {
    std::set<std::string> origins;
    for (const auto& source : model.upstream) {
      if (source.page) continue;
      if (!source.url.empty()) origins.insert(origin_of(source.url));
      for (const auto& [file, url] : source.urls) origins.insert(origin_of(url));
    }
    origins.erase("");
    for (const auto& o : origins) ++counts[o];
  }
  return counts;
}

HostReport check_host(HostReport host, double timeout_s) {
  net::HttpRequest request;
  request.method = net::HttpMethod::Head;
  request.url = host.host + "/";
  request.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  const auto start = std::chrono::steady_clock::now();
  const net::HttpResponse response = net::http_request(request);
  host.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  host.checked = true;
  host.status = response.status;
  host.reachable = response.status != 0;
  host.error = response.error;
  return host;
}

}  // namespace

DownloadReport check_downloads(bool offline, double timeout_s) {
  DownloadReport r;
  r.offline = offline;
  r.catalog = library::default_catalog_path().string();
  std::map<std::string, int> counts;
  try {
    counts = models_per_origin(library::Catalog::load(r.catalog));
  } catch (const Error& e) {
    r.catalog_error = e.what();
    return r;
  }
  for (const auto& [origin, models] : counts) {
    HostReport h;
    h.host = origin;
    h.models = models;
    r.hosts.push_back(h);
  }
  std::stable_sort(r.hosts.begin(), r.hosts.end(), [](const HostReport& a, const HostReport& b) { return a.models > b.models; });
  if (offline) return r;
  // All hosts at once: the whole check takes one timeout at most, not one per host.
  std::vector<std::future<HostReport>> pending;
  for (const auto& h : r.hosts) pending.push_back(std::async(std::launch::async, check_host, h, timeout_s));
  for (size_t i = 0; i < pending.size(); ++i) r.hosts[i] = pending[i].get();
  return r;
}

}  // namespace framelift::api
