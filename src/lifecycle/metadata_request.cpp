#include "lifecycle/metadata_request.h"

#include <cstdlib>

namespace framelift::lifecycle {

std::string metadata_base_url(std::string_view documented, std::string_view override_url) {
  std::string url(documented);
  if (!override_url.empty()) {
    url = override_url;
  } else if (const char* env = std::getenv("FRAMELIFT_METADATA_URL"); env && *env) {
    url = env;
  }
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

net::HttpResponse metadata_request(const MetadataEndpoint& endpoint, net::HttpMethod method, std::string_view path,
                                   std::vector<std::pair<std::string, std::string>> headers) {
  net::HttpRequest request;
  request.method = method;
  request.url = endpoint.base_url + std::string(path);
  request.headers = std::move(headers);
  request.timeout = endpoint.timeout;
  request.bypass_proxy = true;
  request.max_body_bytes = 64 * 1024;  // every answer we read is a few hundred bytes
  request.cancel = endpoint.cancel;
  return net::http_request(request);
}

}  // namespace framelift::lifecycle
