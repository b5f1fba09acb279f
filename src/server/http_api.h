#pragma once
// The REST routes of `framelift serve` on an httplib server (docs/server.md lists them with their
// statuses). Every route but /api/health needs a user's token; a user sees and acts on only their
// own jobs (404 for another's), an admin on all.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace httplib {
class Server;
}

namespace framelift::server {

class Store;
class Workers;
class MediaRoots;
class Authenticator;
class Uploads;
class LongResponses;
class PreviewQueue;
class DiskGuard;

struct ApiContext {
  Store& store;
  Workers& workers;
  const MediaRoots& media;
  Authenticator& auth;
  std::filesystem::path data_dir;
  int max_active_jobs_per_user;
  Uploads& uploads;
  int64_t max_upload_bytes;
  size_t max_json_bytes;
  double price_per_hour = 0;           // USD per worker slot and hour: a job's "spent"
  bool model_downloads = true;         // POST /api/models/install may download (else npm tarballs only)
  bool tls = false;                    // session cookies are then Secure
  LongResponses& long_responses;       // event streams and downloads (guarded_server.h)
  int max_long_per_user = 4;
  PreviewQueue& previews;              // where previews run (preview_queue.h)
  int64_t max_preview_pixels = 0;      // the largest frame a preview's stages may make
  const DiskGuard& disk;               // --min-free-bytes: 507 for new jobs and uploads below it
  int64_t max_upload_bytes_per_user;   // what one user's uploads may hold together (uploads.h)
  std::atomic<bool> stopping{false};   // set before the server stops: event streams end
};

void add_api_routes(httplib::Server& server, ApiContext& context);

// Every route as (method, path), paths as docs/openapi.json writes them ("/api/jobs/{id}").
std::vector<std::pair<std::string, std::string>> api_routes();

}  // namespace framelift::server
