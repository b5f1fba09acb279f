#pragma once
// The REST contract (docs/openapi.json, compiled in at build time), served at /api/openapi.json
// so that a client generator or Swagger UI reads the contract of the server it talks to.
#include <string>

namespace framelift::server {

const std::string& openapi_document();

}  // namespace framelift::server
