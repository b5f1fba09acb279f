#pragma once
// Uploaded inputs, resumable: the client declares a name and size, then sends the bytes in order
// as PUTs with Content-Range; after a cut it asks how much arrived and goes on from there. The
// bytes go to DATA/uploads/ID.part and become DATA/uploads/ID/NAME, usable as a job's input, only
// when all of them are there. A chunk cut midway is never counted: HTTP hands the handler a whole
// body or nothing.
//
// Thread-safety: one upload is written by one request at a time (a second one is refused, 409).
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include "server/disk_space.h"
#include "server/store.h"

namespace framelift::server {

class Uploads {
 public:
  // `disk`: the free space every chunk must leave; not owned, outlives this.
  Uploads(Store& store, std::filesystem::path data_dir, const DiskGuard& disk)
      : store_(store), dir_(std::move(data_dir) / "uploads"), disk_(disk) {}

  struct Outcome {
    int status = 200;  // 200 done or partial, 409 out of order or busy, 400 bad range,
                       // 507 the disk would fall under --min-free-bytes, 500 write failed
    std::string error;
    Store::Upload upload;
  };
  // A new upload of `size` bytes for `user`: 201, or 413 when it would take the user's uploads
  // over `quota` bytes (bytes_held), or 507 when it, with what the uploads in progress (anyone's)
  // are still to send, would leave the disk under its minimum: refused before a byte is written.
  // Serialised, so that two requests at once cannot both take the last of a quota.
  Outcome create(const User& user, const std::string& name, int64_t size, int64_t quota);
  // Appends `bytes` at `offset` (which must be what has arrived so far).
  Outcome append(const Store::Upload& u, int64_t offset, const std::string& bytes);

  std::filesystem::path file(const Store::Upload& u) const { return dir_ / u.id / u.name; }

  // What `user_id`'s uploads count against the per-user quota: the declared size of each one in
  // progress (reserved, so parallel uploads cannot overrun it) and of each complete one whose
  // file is still there (an admin frees a user's share by deleting DATA/uploads/ID).
  int64_t bytes_held(int64_t user_id);

 private:
  Store& store_;
  std::filesystem::path dir_;
  const DiskGuard& disk_;
  std::mutex mutex_;
  std::set<std::string> busy_;
  std::mutex create_mutex_;
};

}  // namespace framelift::server
