#pragma once
// `framelift serve`: one process serving the REST API (docs/server.md, docs/openapi.yaml) over
// HTTP on loopback, or HTTPS (or plain HTTP only with insecure_http) on any other address, with a
// queue in DATA/server.db and one worker slot per device.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "server/http_limits.h"

namespace framelift::server {

struct ServeOptions {
  std::string listen = "127.0.0.1:8642";          // HOST:PORT; port 0 picks a free one
  std::filesystem::path data;                     // the server's folder: database, job folders, outputs
  std::vector<std::filesystem::path> media;       // roots inputs are read from
  std::vector<std::string> devices;               // one worker slot each; empty: one on the default device
  std::string tls_cert, tls_key;                  // PEM files: HTTPS
  bool insecure_http = false;                     // allow plain HTTP on a non-loopback address
  int max_active_jobs_per_user = 16;              // queued + running
  size_t max_request_bytes = 1 << 20;             // JSON bodies
  int64_t max_upload_bytes = int64_t(16) << 30;    // one uploaded file
  int64_t max_upload_bytes_per_user = int64_t(64) << 30;  // all of one user's uploads (413 past it)
  int64_t min_free_bytes = int64_t(1) << 30;       // free space kept on DATA's disk (507, jobs stop)
  int busy_timeout_ms = 5000;                      // a database write waits this long for a lock
  size_t max_chunk_bytes = size_t(16) << 20;       // one PUT of an upload
  double price_per_hour = 0;                      // USD per worker slot and hour (jobs show what they spent)
  bool model_downloads = true;                    // the model library may download (false: npm tarballs only)
  int64_t max_preview_pixels = int64_t(7680) * 4320;  // the largest frame a preview's stages may make (8K)
  HttpLimits http;                                // what one client may cost (http_limits.h)
  std::function<void(const std::string& url)> on_listening;  // called once bound (the CLI prints it)
};

// Whether HOST is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& host);

// Serves until a stop is requested (SIGINT/SIGTERM, util/stop.h); running jobs then go back to the
// queue with their finished segments kept. Throws Error(Usage) for bad options (a non-loopback
// address without TLS or --insecure-http, unreadable certificates, a port in use), Error(Output)
// when DATA cannot be written, Error(Resource) when another server holds DATA (data_lock.h):
// then nothing in DATA was touched.
void serve(const ServeOptions& options);

}  // namespace framelift::server
