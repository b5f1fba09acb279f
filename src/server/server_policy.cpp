#include "server/server_policy.h"

#include "server/media_roots.h"

namespace framelift::server {

PipelinePolicy server_policy(const MediaRoots& media) {
  PipelinePolicy p;  // default filters, no devices, default bounds, the model cache allowed
  for (size_t i = 0; i < media.size(); ++i) p.file_roots.push_back(media.root(int(i)));
  return p;
}

}  // namespace framelift::server
