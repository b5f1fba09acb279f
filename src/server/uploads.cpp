#include "server/uploads.h"

#include <fstream>

#include "util/str.h"

namespace framelift::server {
namespace fs = std::filesystem;

Uploads::Outcome Uploads::append(const Store::Upload& u, int64_t offset, const std::string& bytes) {
  {
    std::lock_guard lock(mutex_);
    if (!busy_.insert(u.id).second) return {409, "another request is writing this upload", u};
  }
  struct Release {
    Uploads& self;
    std::string id;
    ~Release() {
      std::lock_guard lock(self.mutex_);
      self.busy_.erase(id);
    }
  } release{*this, u.id};

  Store::Upload now = *store_.upload(u.id);  // what arrived, read under the busy mark
  if (now.complete) return {409, "the upload is complete", now};
  if (offset != now.received) return {409, str("expected the bytes from ", now.received), now};
  if (now.received + int64_t(bytes.size()) > now.size) return {400, str("more than the declared ", now.size, " bytes"), now};
  // Checked before each write: a full disk would fail the database and every running job too.
  if (const std::string why = disk_.shortage(int64_t(bytes.size())); !why.empty()) return {507, why, now};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const fs::path part = dir_ / (u.id + ".part");
  {
    // The part file is cut back to what the database says arrived: bytes of an earlier chunk
    // written but not recorded (a crash between the two) are written again, not kept twice.
    if (fs::exists(part, ec) && int64_t(fs::file_size(part, ec)) != now.received) fs::resize_file(part, uintmax_t(now.received), ec);
    std::ofstream out(part, std::ios::binary | std::ios::app);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.flush();
    if (!out) return {500, "cannot write the upload: " + part.string(), now};
  }
  now.received += int64_t(bytes.size());
  now.complete = now.received == now.size;
  if (now.complete) {
    fs::create_directories(dir_ / u.id, ec);
    fs::rename(part, file(now), ec);
    if (ec) return {500, "cannot keep the upload: " + ec.message(), now};
  }
  store_.record_upload(u.id, now.received, now.complete);
  return {200, "", now};
}

Uploads::Outcome Uploads::create(const User& user, const std::string& name, int64_t size, int64_t quota) {
  std::lock_guard lock(create_mutex_);
  const int64_t held = bytes_held(user.id);
  if (held + size > quota)
    return {413, str("your uploads hold ", held, " bytes; ", size, " more would pass your quota of ", quota,
                     " (--max-upload-bytes-per-user)"), {}};
  // The bytes other uploads in progress were admitted with count as written already: without
  // them, two uploads could each be admitted on the same free space and the later one fail halfway.
  if (const std::string why = disk_.shortage(size, store_.bytes_to_arrive()); !why.empty()) return {507, why, {}};
  return {201, "", store_.add_upload(user, name, size)};
}

int64_t Uploads::bytes_held(int64_t user_id) {
  int64_t held = 0;
  std::error_code ec;
  for (const Store::Upload& u : store_.uploads_of(user_id))
    if (!u.complete || fs::exists(file(u), ec)) held += u.size;
  return held;
}

}  // namespace framelift::server
