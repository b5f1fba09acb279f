#pragma once
// The one way the preemption sources call a metadata service: never through a proxy, with the
// endpoint's short timeout and cancel flag.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lifecycle/preemption_source.h"
#include "net/http_request.h"

namespace framelift::lifecycle {

// `path` starts with '/' and may carry a query.
net::HttpResponse metadata_request(const MetadataEndpoint& endpoint, net::HttpMethod method, std::string_view path,
                                   std::vector<std::pair<std::string, std::string>> headers);

}  // namespace framelift::lifecycle
