#include "server/media_roots.h"

#include <algorithm>

#include "util/error.h"
#include "util/fs.h"
#include "util/str.h"

namespace framelift::server {
namespace fs = std::filesystem;
namespace {

Resolved refused(Resolved::Status s, std::string why) {
  Resolved r;
  r.status = s;
  r.why = std::move(why);
  return r;
}

}  // namespace

MediaRoots::MediaRoots(const std::vector<fs::path>& roots) {
  for (const fs::path& root : roots) {
    std::error_code ec;
    const fs::path c = fs::canonical(root, ec);
    if (ec || !fs::is_directory(c)) throw Error(ErrorKind::Usage, str("--media ", root.string(), ": not a folder"));
    roots_.push_back(c);
  }
}

Resolved MediaRoots::resolve_in(const std::string& relative, int root) const {
  const fs::path rel(relative);
  if (rel.is_absolute()) return refused(Resolved::Status::Outside, relative + ": give a path relative to a media root");
  for (const fs::path& part : rel)
    if (part == "..") return refused(Resolved::Status::Outside, relative + ": '..' is not allowed");
  std::error_code ec;
  const fs::path c = fs::canonical(roots_[size_t(root)] / rel, ec);
  if (ec) return refused(Resolved::Status::Missing, relative + ": no such file under media root " + std::to_string(root));
  // A symlink inside the root may point anywhere: what counts is where it lands.
  if (!path_within(c, roots_[size_t(root)])) return refused(Resolved::Status::Outside, relative + ": leads outside the media roots");
  Resolved r;
  r.status = Resolved::Status::Ok;
  r.path = c;
  r.root = root;
  return r;
}

Resolved MediaRoots::resolve(const std::string& relative, std::optional<int> root) const {
  if (relative.find('\0') != std::string::npos) return refused(Resolved::Status::Malformed, "a path with a NUL byte");
  if (root) {
    if (*root < 0 || size_t(*root) >= roots_.size()) return refused(Resolved::Status::Malformed, str("no media root ", *root));
    return resolve_in(relative, *root);
  }
  Resolved last = refused(Resolved::Status::Missing, relative + ": no such file under the media roots");
  for (int i = 0; i < int(roots_.size()); ++i) {
    Resolved r = resolve_in(relative, i);
    if (r.status != Resolved::Status::Missing) return r;  // found, or refused outright
    last = r;
  }
  return last;
}

std::optional<std::vector<MediaEntry>> MediaRoots::list(const std::string& relative, int root, Resolved* why) const {
  Resolved r = relative.empty() && root >= 0 && size_t(root) < roots_.size() ? Resolved{Resolved::Status::Ok, roots_[size_t(root)], root, ""}
                                                                             : resolve(relative, root);
  if (r.status == Resolved::Status::Ok && !fs::is_directory(r.path)) r = refused(Resolved::Status::Malformed, relative + ": not a folder");
  if (r.status != Resolved::Status::Ok) {
    *why = r;
    return std::nullopt;
  }
  std::vector<MediaEntry> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(r.path, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    MediaEntry m{name, e.is_directory(ec), 0};
    if (!m.directory) m.size = e.file_size(ec);
    out.push_back(m);
  }
  std::sort(out.begin(), out.end(), [](const MediaEntry& a, const MediaEntry& b) {
    return a.directory != b.directory ? a.directory : a.name < b.name;
  });
  return out;
}

}  // namespace framelift::server
