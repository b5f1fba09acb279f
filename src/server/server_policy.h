#pragma once
// What a client's pipeline may do on this server (framelift/policy.h, docs/server.md Security):
// the safe filters only, model and mask files only inside the media roots and the model cache,
// no device= (the worker slot's), the policy's default bounds on sizes. One definition, for every
// route that takes a pipeline (and for the workers, should they check again).
#include <framelift/policy.h>

namespace framelift::server {

class MediaRoots;

PipelinePolicy server_policy(const MediaRoots& media);

}  // namespace framelift::server
