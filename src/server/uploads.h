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

#include "server/store.h"

namespace framelift::server {

class Uploads {
 public:
  Uploads(Store& store, std::filesystem::path data_dir) : store_(store), dir_(std::move(data_dir) / "uploads") {}

  struct Outcome {
    int status = 200;  // 200 done or partial, 409 out of order or busy, 400 bad range, 500 write failed
    std::string error;
    Store::Upload upload;
  };
  // Appends `bytes` at `offset` (which must be what has arrived so far).
  Outcome append(const Store::Upload& u, int64_t offset, const std::string& bytes);

  std::filesystem::path file(const Store::Upload& u) const { return dir_ / u.id / u.name; }

 private:
  Store& store_;
  std::filesystem::path dir_;
  std::mutex mutex_;
  std::set<std::string> busy_;
};

}  // namespace framelift::server
