#include "net/http_download.h"

#include <curl/curl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "net/sha256.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace framelift::net {
namespace {

struct CurlCleanup {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using CurlPtr = std::unique_ptr<CURL, CurlCleanup>;
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

void init_curl_once() {
  // curl_global_init is not guaranteed thread-safe on every libcurl build; do it exactly once.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

std::string lower_hex(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "bytes 100-199/1000" -> start 100, total 1000 (total 0 when "*"). False when unparsable.
bool parse_content_range(std::string_view value, std::uint64_t* start, std::uint64_t* total) {
  if (!starts_with_nocase(value, "bytes ")) return false;
  value.remove_prefix(6);
  size_t dash = value.find('-'), slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return false;
  try {
    *start = std::stoull(std::string(value.substr(0, dash)));
    std::string tail(value.substr(slash + 1));
    *total = tail == "*" ? 0 : std::stoull(tail);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// One HTTP request writing into the open .part. libcurl's callbacks must not throw, so they
// record what went wrong here and return a value that makes libcurl stop; run() turns the
// record into an Error once curl_easy_perform has returned.
struct Transfer {
  const std::string& url;
  const fs::path& part;
  const DownloadOptions& options;
  CURL* curl;
  std::FILE* file;
  std::uint64_t requested_from;  // Range start asked for; 0 means no Range header
  std::uint64_t in_file;         // bytes in the .part right now
  std::uint64_t total = 0;       // expected final size, 0 while unknown

  long status = 0;
  std::string reason;         // reason phrase of the latest status line
  std::string content_range;  // Content-Range of the latest response
  bool body_started = false;
  bool truncated = false;       // the server ignored Range: the .part was emptied
  bool restart = false;         // the server answered a different range than asked
  bool cancelled = false;
  std::string write_error;
  Clock::time_point last_report{};

  bool cancel_requested() const { return options.cancel && options.cancel->load(); }

  void report(bool force) {
    if (!options.on_progress) return;
    auto now = Clock::now();
    if (!force && now - last_report < std::chrono::milliseconds(100)) return;
    last_report = now;
    options.on_progress(in_file, total);
  }

  bool truncate_part() {
    std::fflush(file);
    if (::ftruncate(::fileno(file), 0) != 0) {
      write_error = std::strerror(errno);
      return false;
    }
    in_file = 0;
    truncated = true;
    return true;
  }

  // Decides, on the first body byte of the final response, whether the body is ours to write.
  bool begin_body() {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) return false;  // reported after perform
    if (status == 206) {
      std::uint64_t start = 0, full = 0;
      if (!parse_content_range(content_range, &start, &full) || start != requested_from) {
        restart = true;
        return false;
      }
      total = full;
    } else {
      if (requested_from > 0) {
        log::debug(url, ": server ignored the Range request; downloading from the start");
        if (!truncate_part()) return false;
      }
      curl_off_t length = -1;
      curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      total = length >= 0 ? std::uint64_t(length) : 0;
    }
    return true;
  }

  static size_t on_header(char* data, size_t size, size_t count, void* self_ptr) {
    auto& self = *static_cast<Transfer*>(self_ptr);
    std::string_view line(data, size * count);
    if (starts_with_nocase(line, "http/")) {
      // A new response (after a redirect, or a 100 Continue): forget the previous one's headers.
      self.content_range.clear();
      size_t sp = line.find(' ');
      size_t sp2 = sp == std::string_view::npos ? sp : line.find(' ', sp + 1);
      self.reason = sp2 == std::string_view::npos ? "" : std::string(trim(line.substr(sp2 + 1)));
    } else if (starts_with_nocase(line, "content-range:")) {
      self.content_range = std::string(trim(line.substr(14)));
    }
    return size * count;
  }

  static size_t on_body(char* data, size_t size, size_t count, void* self_ptr) {
    auto& self = *static_cast<Transfer*>(self_ptr);
    size_t bytes = size * count;
    if (!self.body_started) {
      self.body_started = true;
      if (!self.begin_body()) return 0;
    }
    if (self.cancel_requested()) {
      self.cancelled = true;
      return 0;
    }
    if (std::fwrite(data, 1, bytes, self.file) != bytes) {
      self.write_error = std::strerror(errno);
      return 0;
    }
    self.in_file += bytes;
    self.report(false);
    return bytes;
  }

  static int on_progress(void* self_ptr, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    // Called about once a second even while no data arrives, so a cancel is seen on a stall too.
    auto& self = *static_cast<Transfer*>(self_ptr);
    if (self.cancel_requested()) self.cancelled = true;
    return self.cancelled ? 1 : 0;
  }
};

enum class Outcome { Complete, RestartFromZero };

Outcome run(Transfer& t) {
  CURL* curl = t.curl;
  char errbuf[CURL_ERROR_SIZE] = {};
  std::string range = str(t.requested_from, "-");
  curl_easy_setopt(curl, CURLOPT_URL, t.url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM games: we may run on any thread
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, t.options.max_redirects);
  // A redirect must not turn a download into a read of file:// or anything else.
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "framelift");
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, long(t.options.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, t.options.low_speed_bytes_per_s);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, long(t.options.low_speed_time.count()));
  // CURLOPT_RANGE rather than CURLOPT_RESUME_FROM: the latter makes libcurl fail outright when the
  // server ignores the range, where we would rather start over.
  curl_easy_setopt(curl, CURLOPT_RANGE, t.requested_from > 0 ? range.c_str() : nullptr);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Transfer::on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &Transfer::on_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);

  CURLcode rc = curl_easy_perform(curl);
  // The disk may fill up only now, when the stdio buffer goes out.
  if (std::fflush(t.file) != 0 && t.write_error.empty()) t.write_error = std::strerror(errno);
  if (!t.body_started) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &t.status);

  if (t.cancelled)
    throw Error(ErrorKind::Interrupted, str(t.url, ": download cancelled (", t.in_file, " bytes kept in ",
                                            t.part.string(), " for resuming)"));
  if (!t.write_error.empty())
    throw Error(ErrorKind::Output, str(t.part.string(), ": cannot write (", t.write_error, ")"));
  if (t.restart) return Outcome::RestartFromZero;
  // 416: the .part is not a prefix the server can continue (the file shrank or changed).
  if (t.status == 416 && t.requested_from > 0) return Outcome::RestartFromZero;
  auto http_error = [&] {
    char* effective = nullptr;
    curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
    std::string via = effective && t.url != effective ? str(" (redirected to ", effective, ")") : "";
    return Error(ErrorKind::Input, str(t.url, ": HTTP ", t.status, t.reason.empty() ? "" : " ", t.reason, via));
  };
  if (t.status >= 400) throw http_error();
  if (rc != CURLE_OK) {
    std::string why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    std::string kept = t.in_file > 0 ? str("; ", t.in_file, t.total ? str(" of ", t.total) : "", " bytes kept in ",
                                           t.part.string(), ", run again to resume")
                                     : "";
    throw Error(ErrorKind::Input, str(t.url, ": download failed (", why, ")", kept));
  }
  if (t.status < 200 || t.status >= 300) throw http_error();  // e.g. a 3xx without Location
  // A 200 with an empty body never reached on_body, so a stale prefix may still be there.
  if (t.requested_from > 0 && t.status != 206 && !t.truncated && !t.truncate_part())
    throw Error(ErrorKind::Output, str(t.part.string(), ": cannot write (", t.write_error, ")"));
  if (t.total > 0 && t.in_file != t.total)
    throw Error(ErrorKind::Input, str(t.url, ": download ended at ", t.in_file, " of ", t.total,
                                      " bytes; run again to resume"));
  return Outcome::Complete;
}

}  // namespace

fs::path download_part_path(const fs::path& dest) {
  fs::path part = dest;
  part += ".part";
  return part;
}

DownloadResult download_file(const std::string& url, const fs::path& dest, const DownloadOptions& options) {
  fs::path folder = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw Error(ErrorKind::Output, str(dest.string(), ": folder ", folder.string(), " does not exist"));
  if (fs::is_directory(dest, ec))
    throw Error(ErrorKind::Output, str(dest.string(), ": is a folder, not a file name"));

  const std::string expected = lower_hex(options.expected_sha256);
  if (!expected.empty() && (expected.size() != 64 || expected.find_first_not_of("0123456789abcdef") != std::string::npos))
    throw Error(ErrorKind::Usage, str(url, ": expected SHA-256 '", options.expected_sha256, "' is not 64 hex digits"));

  init_curl_once();
  CurlPtr curl(curl_easy_init());
  if (!curl) throw Error(ErrorKind::Resource, str(url, ": cannot initialise libcurl"));

  fs::path part = download_part_path(dest);
  FilePtr file(std::fopen(part.c_str(), "ab"));
  if (!file) throw Error(ErrorKind::Output, str(part.string(), ": cannot write (", std::strerror(errno), ")"));
  // Two downloads into one .part would interleave their bytes; the lock lives as long as `file`.
  if (::flock(::fileno(file.get()), LOCK_EX | LOCK_NB) != 0)
    throw Error(ErrorKind::Output, str(part.string(), ": another download to this file is in progress"));
  std::fseek(file.get(), 0, SEEK_END);
  const std::uint64_t existing = std::uint64_t(std::ftell(file.get()));

  // At most two requests: the resume, then (when the server cannot continue that prefix) one
  // from byte 0.
  std::optional<Transfer> t;
  t.emplace(url, part, options, curl.get(), file.get(), existing, existing);
  try {
    if (run(*t) == Outcome::RestartFromZero) {
      log::debug(url, ": cannot resume ", part.string(), " at byte ", existing, "; downloading from the start");
      if (!t->truncate_part())
        throw Error(ErrorKind::Output, str(part.string(), ": cannot write (", t->write_error, ")"));
      curl_easy_reset(curl.get());
      t.emplace(url, part, options, curl.get(), file.get(), 0, 0);
      if (run(*t) == Outcome::RestartFromZero)
        throw Error(ErrorKind::Input, str(url, ": server answered a byte range that was not asked for"));
    }
  } catch (const Error&) {
    // An empty .part helps no later attempt; a non-empty one is what the next call resumes.
    if (t->in_file == 0) fs::remove(part, ec);
    throw;
  }
  t->report(true);

  DownloadResult result;
  result.bytes = t->in_file;
  result.resumed_from = t->truncated || t->requested_from == 0 ? 0 : existing;
  result.sha256 = sha256_file(part);
  if (!expected.empty() && expected != result.sha256) {
    // Deleted, not kept: resuming would only append to bytes already known to be wrong.
    fs::remove(part, ec);
    throw Error(ErrorKind::Input, str(dest.string(), ": SHA-256 mismatch: expected ", expected, ", got ",
                                      result.sha256, " (downloaded from ", url, "; discarded)"));
  }
  commit_file(part, dest);
  return result;
}

}  // namespace framelift::net
