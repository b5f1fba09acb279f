#include "server/http_api.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <future>
#include <map>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <framelift/error.h>
#include <framelift/models.h>
#include <framelift/pipeline.h>
#include <framelift/plan.h>
#include <framelift/policy.h>
#include <framelift/version.h>

#include "server/auth.h"
#include "server/client_paths.h"
#include "server/media_roots.h"
#include "server/preview.h"
#include "server/server_policy.h"
#include "server/store.h"
#include "server/uploads.h"
#include "server/openapi_document.h"
#include "server/web_page.h"
#include "server/workers.h"
#include "server/guarded_server.h"
#include "server/preview_queue.h"
#include "util/json_text.h"
#include "util/log.h"

namespace framelift::server {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// Invalid UTF-8 (a file name in another encoding) becomes U+FFFD: util/json_text.h.
void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(json_text(body), "application/json");
}

void error(httplib::Response& res, int status, const std::string& message) { reply(res, status, {{"error", message}}); }

// The status of a framelift::Error a request ran into: 400 when the request's content caused it
// (its pipeline, a policy refusal, its input, its model), 500 otherwise. The one mapping.
int status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage:
    case ErrorKind::Input:
    case ErrorKind::Model: return 400;
    default: return 500;
  }
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The media roots' files as relative paths: what every client is shown of them.
ClientPaths root_paths(const MediaRoots& media) {
  ClientPaths p;
  for (size_t i = 0; i < media.size(); ++i) p.add(media.root(int(i)), "");
  return p;
}

// What the client of job `j` is shown of the server's paths: its input as it named it (an
// upload by the upload's name), the media roots' files relative to them.
ClientPaths job_paths(const JobRecord& j, const ApiContext& c) {
  ClientPaths p = root_paths(c.media);
  const std::string input = j.spec.options.value("input", std::string());
  if (input.rfind("upload:", 0) == 0) {
    const std::optional<Store::Upload> up = c.store.upload(input.substr(7));
    p.add(j.spec.input, up ? up->name : "the upload");
  } else if (!input.empty()) {
    p.add(j.spec.input, input);
  }
  return p;
}

// A job as the API shows it. ETA from the last measured speed; spent: the running time since
// the job last started, at the server's --price-per-hour for one worker slot.
json job_view(const JobRecord& j, const ApiContext& c) {
  const double price_per_hour = c.price_per_hour;
  const json& o = j.spec.options;
  const double end = j.finished > 0 ? j.finished : now_seconds();
  const double ran = j.started > 0 && end > j.started ? end - j.started : 0.0;
  const bool running = j.state == JobState::Running;
  const double eta = running && j.fps > 0 && j.frames_total > j.frames_in ? double(j.frames_total - j.frames_in) / j.fps : 0.0;
  json v = {{"id", j.id},
            {"user", j.user},
            {"input", o.value("input", std::string())},
            {"root", o.value("root", 0)},
            {"output", j.spec.output_name},
            {"pipeline", j.spec.pipeline},
            {"priority", j.spec.priority},
            {"state", job_state_name(j.state)},
            {"progress", {{"frames", j.frames_in}, {"total", j.frames_total}, {"fps", j.fps},
                          {"percent", j.frames_total > 0 ? 100.0 * double(j.frames_in) / double(j.frames_total) : 0.0},
                          {"eta_s", eta}, {"running_s", ran}, {"spent", ran * price_per_hour / 3600.0}}},
            {"created", j.created},
            {"started", j.started},
            {"finished", j.finished}};
  if (!j.error.empty()) v["error"] = job_paths(j, c).rewrite(j.error);
  return v;
}

// A plain file name for the output: no folders, nothing hidden, an extension for the container.
bool valid_output_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.' || name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
    return false;
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return false;
  return fs::path(name).has_extension();
}

// A whole JSON number within [lo, hi]: nlohmann's get<int>() of 2^32 would be 0, and of -1 as
// an unsigned, 2^64-1.
bool whole_number_in(const json& v, int64_t lo, int64_t hi) {  // hi >= 0
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t(hi) && int64_t(v.get<uint64_t>()) >= lo;
  return v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
}

bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

constexpr int64_t kMaxFrames = int64_t(1) << 40;
constexpr int kMaxPriority = 1000;

// A header's quoted-string: '"' and '\\' escaped, control bytes dropped (RFC 9110 5.6.4).
std::string header_quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) continue;
    if (c == '"' || c == '\\') out += '\\';
    out += char(c);
  }
  return out + "\"";
}

// RFC 8187's ext-value: UTF-8, every byte outside the unreserved set percent-encoded.
std::string ext_value(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "UTF-8''";
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') out += char(c);
    else out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

// The pipeline text of a body (absent: pass-through), or nullopt when it is there but no string.
std::optional<std::string> pipeline_of(const json& body) {
  if (!body.contains("pipeline")) return std::string();
  if (!body["pipeline"].is_string()) return std::nullopt;
  return body["pipeline"].get<std::string>();
}

// The options a job may carry besides input, output and pipeline, checked for their types.
bool read_options(const json& body, json& options, std::string& why) {
  // Encoder, preset and pixel format names: what FFmpeg names them with, nothing longer.
  for (const char* k : {"codec", "preset", "pix_fmt"})
    if (body.contains(k)) {
      if (!body[k].is_string() || !plain_name(body[k])) return why = std::string(k) + " must be a name (letters, digits, - _ .)", false;
      options[k] = body[k];
    }
  if (body.contains("crf")) {
    if (!body["crf"].is_number() || body["crf"].get<double>() < 0 || body["crf"].get<double>() > 63) return why = "crf must be a number 0-63", false;
    options["crf"] = body["crf"];
  }
  for (const char* k : {"segment_frames", "max_frames"})
    if (body.contains(k)) {
      if (!whole_number_in(body[k], 0, kMaxFrames)) return why = std::string(k) + " must be a whole number 0-" + std::to_string(kMaxFrames), false;
      options[k] = body[k];
    }
  return true;
}

// The value of cookie `name` in a Cookie header ("a=1; fl_session=x").
std::string cookie(const std::string& header, const std::string& name) {
  size_t at = 0;
  while (at < header.size()) {
    const size_t end = std::min(header.find(';', at), header.size());
    std::string part = header.substr(at, end - at);
    part.erase(0, part.find_first_not_of(' '));
    if (part.rfind(name + "=", 0) == 0) return part.substr(name.size() + 1);
    at = end + 1;
  }
  return "";
}

constexpr const char* kSessionCookie = "fl_session";
// How long a request waits for its preview; past it the client is told to try a lighter one.
constexpr std::chrono::seconds kPreviewWait{120};

class Routes {
 public:
  explicit Routes(ApiContext& c) : c_(c), policy_(server_policy(c.media)) {}

  // The user of a request, or nullopt after replying 401/429.
  std::optional<User> user(const httplib::Request& req, httplib::Response& res) {
    const Authenticator::Result r = c_.auth.check({.authorization = req.get_header_value("Authorization"),
                                                   .session = cookie(req.get_header_value("Cookie"), kSessionCookie),
                                                   .csrf = req.get_header_value("X-CSRF-Token"),
                                                   .changes = req.method != "GET" && req.method != "HEAD",
                                                   .client = req.remote_addr});
    switch (r.outcome) {
      case Authenticator::Outcome::Ok: return r.user;
      case Authenticator::Outcome::NoCsrf: error(res, 403, "this request needs the session's X-CSRF-Token header"); return std::nullopt;
      case Authenticator::Outcome::TooMany: error(res, 429, "too many failed logins from this address; wait a minute"); break;
      case Authenticator::Outcome::Missing: error(res, 401, "give Authorization: Bearer TOKEN (framelift serve token add NAME)"); break;
      case Authenticator::Outcome::Refused: error(res, 401, "unknown token"); break;
    }
    res.set_header("WWW-Authenticate", "Bearer");
    return std::nullopt;
  }

  // The request's JSON object, or nullopt after replying 413 (over max_json_bytes) or 400.
  std::optional<json> json_body(const httplib::Request& req, httplib::Response& res) {
    if (req.body.size() > c_.max_json_bytes) {
      error(res, 413, "the body is over " + std::to_string(c_.max_json_bytes) + " bytes");
      return std::nullopt;
    }
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) {
      error(res, 400, "the body must be a JSON object");
      return std::nullopt;
    }
    return body;
  }

  // The job of `id` if `u` may see it; else replies 404 (another user's job is not said to exist).
  std::optional<JobRecord> visible_job(const User& u, const std::string& id, httplib::Response& res) {
    std::optional<JobRecord> j = c_.store.job(std::stoll(id));
    if (!j || (!u.admin && j->user_id != u.id)) {
      error(res, 404, "no job " + id);
      return std::nullopt;
    }
    return j;
  }

  void create_job(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    if (const std::string low = c_.disk.shortage(); !low.empty()) return error(res, 507, low);
    const std::optional<json> parsed = json_body(req, res);
    if (!parsed) return;
    if (const std::optional<Resolved> in = input_of(*u, *parsed, res)) create_job_from(*u, *parsed, *in, res);
  }

  // A body's input: "upload" (one of the user's complete uploads) or "input" (a media root's
  // file); nullopt after replying.
  std::optional<Resolved> input_of(const User& u, const json& body, httplib::Response& res) {
    if (body.contains("upload")) return upload_input(u, body, res);
    return media_input(body, res);
  }

  // The file a body's "input" (and optional "root") names inside the media roots; nullopt after
  // replying 400 (missing, malformed, not a file) or 403 (outside the roots).
  std::optional<Resolved> media_input(const json& body, httplib::Response& res) {
    auto refuse = [&](int status, const std::string& why) {
      error(res, status, why);
      return std::nullopt;
    };
    if (!body.contains("input") || !body["input"].is_string()) return refuse(400, "input: a path relative to a media root is required");
    std::optional<int> root;
    if (body.contains("root")) {
      if (!whole_number_in(body["root"], 0, int64_t(c_.media.size()) - 1))
        return refuse(400, "root must be a media root's index, 0-" + std::to_string(c_.media.size() - 1));
      root = body["root"].get<int>();
    }
    const std::string input = body["input"];
    const Resolved in = c_.media.resolve(input, root);
    if (in.status == Resolved::Status::Outside) return refuse(403, in.why);
    if (in.status != Resolved::Status::Ok) return refuse(400, in.why);
    if (!fs::is_regular_file(in.path)) return refuse(400, input + ": not a file");
    return in;
  }

  // An upload of `u`'s, complete, as an input; nullopt after replying 404 or 409.
  std::optional<Resolved> upload_input(const User& u, const json& body, httplib::Response& res) {
    auto up = body["upload"].is_string() ? c_.store.upload(body["upload"]) : std::nullopt;
    if (!up || up->user_id != u.id) {
      error(res, 404, "no such upload");
      return std::nullopt;
    }
    if (!up->complete) {
      error(res, 409, "the upload has " + std::to_string(up->received) + " of its " + std::to_string(up->size) + " bytes");
      return std::nullopt;
    }
    Resolved r;
    r.status = Resolved::Status::Ok;
    r.path = c_.uploads.file(*up);
    r.root = -1;
    return r;
  }

  // What the client of a request for `in` is shown of the server's paths (client_paths.h).
  ClientPaths request_paths(const json& body, const Resolved& in) {
    ClientPaths p = root_paths(c_.media);
    if (in.root < 0) {
      const std::optional<Store::Upload> up = c_.store.upload(body["upload"].get<std::string>());
      p.add(in.path, up ? up->name : "the upload");
    }
    return p;
  }

  // Whether `pipeline` parses and the policy allows it; else replies 400 with one line and false.
  bool allowed_pipeline(const std::string& pipeline, const ClientPaths& paths, httplib::Response& res) {
    try {
      check_pipeline(pipeline, policy_);
      return true;
    } catch (const Error& e) {
      error(res, status_of(e.kind()), "pipeline: " + paths.rewrite(e.what()));
      return false;
    }
  }

  void create_job_from(const User& user, const json& body, const Resolved& in, httplib::Response& res) {
    if (!body.contains("output") || !body["output"].is_string() || !valid_output_name(body["output"]))
      return error(res, 400, "output: a plain file name with an extension is required (out.mkv)");
    JobSpec spec;
    spec.input = in.path.string();
    spec.output_name = body["output"];
    const std::optional<std::string> pipeline = pipeline_of(body);
    if (!pipeline) return error(res, 400, "pipeline must be a string (\"\" or left out: pass-through)");
    spec.pipeline = *pipeline;
    if (!allowed_pipeline(spec.pipeline, request_paths(body, in), res)) return;
    std::string why;
    spec.options = {{"input", body.contains("upload") ? "upload:" + body["upload"].get<std::string>() : body["input"].get<std::string>()},
                    {"root", in.root}};
    if (!read_options(body, spec.options, why)) return error(res, 400, why);
    if (body.contains("priority")) {
      if (!whole_number_in(body["priority"], -kMaxPriority, kMaxPriority))
        return error(res, 400, "priority must be a whole number from -" + std::to_string(kMaxPriority) + " to " + std::to_string(kMaxPriority));
      spec.priority = body["priority"].get<int>();
    }
    if (c_.store.active_jobs(user.id) >= c_.max_active_jobs_per_user)
      return error(res, 429, "you have " + std::to_string(c_.max_active_jobs_per_user) + " jobs queued or running; wait for one to finish");
    const int64_t id = c_.store.add_job(user, spec);
    c_.workers.wake();
    res.set_header("Location", "/api/jobs/" + std::to_string(id));
    reply(res, 201, {{"id", id}, {"state", "queued"}});
  }

  void output(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    auto j = visible_job(*u, req.matches[1], res);
    if (!j) return;
    if (j->state != JobState::Done) return error(res, 409, std::string("job ") + std::to_string(j->id) + " is " + job_state_name(j->state));
    const fs::path file = Workers::output_path(c_.data_dir, *j);
    std::error_code ec;
    const uintmax_t size = fs::file_size(file, ec);
    if (ec) return error(res, 410, "the output of job " + std::to_string(j->id) + " is gone");
    auto f = std::shared_ptr<std::FILE>(std::fopen(file.c_str(), "rb"), [](std::FILE* p) {
      if (p) std::fclose(p);
    });
    if (!f) return error(res, 500, "cannot read the output");
    std::shared_ptr<void> slot = c_.long_responses.acquire(u->id);
    if (!slot) return error(res, 429, "you have " + std::to_string(c_.max_long_per_user) + " downloads and event streams open; close one");
    // Both forms (RFC 6266): a quoted name for old clients, the exact UTF-8 one for the rest.
    res.set_header("Content-Disposition", "attachment; filename=" + header_quoted(j->spec.output_name) + "; filename*=" + ext_value(j->spec.output_name));
    // A content provider with a length: httplib answers Range requests from it (206).
    res.set_content_provider(size_t(size), "application/octet-stream", [f, slot](size_t offset, size_t length, httplib::DataSink& sink) {
      char buffer[1 << 16];
      if (std::fseek(f.get(), long(offset), SEEK_SET) != 0) return false;
      while (length > 0) {
        const size_t n = std::fread(buffer, 1, std::min(length, sizeof buffer), f.get());
        if (n == 0 || !sink.write(buffer, n)) return false;
        length -= n;
      }
      return true;
    });
  }

  void login(const httplib::Request& req, httplib::Response& res) {
    const std::optional<json> parsed = json_body(req, res);
    if (!parsed) return;
    const json& body = *parsed;
    if (!body.contains("token") || !body["token"].is_string()) return error(res, 400, "give {\"token\": TOKEN}");
    const Authenticator::Result r = c_.auth.check_token(body["token"], req.remote_addr);
    if (r.outcome == Authenticator::Outcome::TooMany) return error(res, 429, "too many failed logins from this address; wait a minute");
    if (r.outcome != Authenticator::Outcome::Ok) return error(res, 401, "unknown token");
    const Store::Session s = c_.store.add_session(*r.user);
    res.set_header("Set-Cookie", std::string(kSessionCookie) + "=" + s.cookie + "; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict" +
                                     (c_.tls ? "; Secure" : ""));
    reply(res, 200, {{"user", r.user->name}, {"admin", r.user->admin}, {"csrf", s.csrf}});
  }

  void session(const httplib::Request& req, httplib::Response& res) {
    auto s = c_.store.session_user(cookie(req.get_header_value("Cookie"), kSessionCookie));
    if (!s) return error(res, 401, "not logged in");
    reply(res, 200, {{"user", s->first.name}, {"admin", s->first.admin}, {"csrf", s->second}});
  }

  void logout(const httplib::Request& req, httplib::Response& res) {
    if (!user(req, res)) return;
    c_.store.end_session(cookie(req.get_header_value("Cookie"), kSessionCookie));
    res.set_header("Set-Cookie", std::string(kSessionCookie) + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
    reply(res, 200, {{"ok", true}});
  }

  void plan(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    const std::optional<json> parsed = json_body(req, res);
    if (!parsed) return;
    const json& body = *parsed;
    const std::optional<Resolved> in = input_of(*u, body, res);
    if (!in) return;
    PlanRequest p;
    p.input = in->path.string();
    const std::optional<std::string> pipeline = pipeline_of(body);
    if (!pipeline) return error(res, 400, "pipeline must be a string");
    p.pipeline = *pipeline;
    const ClientPaths paths = request_paths(body, *in);
    if (!allowed_pipeline(p.pipeline, paths, res)) return;
    if (body.contains("codec")) {
      if (!body["codec"].is_string() || !plain_name(body["codec"])) return error(res, 400, "codec must be a name (letters, digits, - _ .)");
      p.codec = body["codec"];
    }
    p.local = true;
    // Where the job would write: its disk is what the plan's disk figures are held against.
    p.output = (c_.data_dir / "outputs" / "plan.mkv").string();
    try {
      const PlanResult r = plan_job(p);
      // The data folder's path stays on the server (ClientPaths): the folder goes by its role.
      ClientPaths shown = paths;
      shown.add(c_.data_dir / "outputs", "the server's outputs folder");
      json answer = json::parse(r.json);
      answer["disk"]["folder"] = "the server's outputs folder";
      for (json& note : answer["notes"]) note = shown.rewrite(note.get<std::string>());
      reply(res, 200, answer);
    } catch (const Error& e) {
      error(res, status_of(e.kind()), paths.rewrite(e.what()));
    }
  }

  void preview(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    const std::optional<json> parsed = json_body(req, res);
    if (!parsed) return;
    const json& body = *parsed;
    const std::optional<Resolved> in = input_of(*u, body, res);
    if (!in) return;
    const std::optional<std::string> pipeline = pipeline_of(body);
    if (!pipeline) return error(res, 400, "pipeline must be a string");
    const ClientPaths paths = request_paths(body, *in);
    if (!allowed_pipeline(*pipeline, paths, res)) return;
    if (body.contains("time") && (!body["time"].is_number() || body["time"].get<double>() < 0 || body["time"].get<double>() > 1e7))
      return error(res, 400, "time must be a number of seconds >= 0");
    const double t = body.contains("time") ? body["time"].get<double>() : 0.0;
    const fs::path png = c_.data_dir / "previews" / (std::to_string(u->id) + ".png");
    std::error_code ec;
    fs::create_directories(png.parent_path(), ec);
    const PreviewRequest request{in->path.string(), *pipeline, t, c_.max_preview_pixels, policy_};
    std::optional<std::future<void>> done = c_.previews.submit(u->id, [request, png] { render_preview(request, png); });
    if (!done) return error(res, 429, "a preview of yours is still running, or too many are waiting; try again in a moment");
    if (done->wait_for(kPreviewWait) != std::future_status::ready)
      return error(res, 503, "the preview is taking longer than " + std::to_string(kPreviewWait.count()) + " s; try a lighter pipeline");
    try {
      done->get();
    } catch (const Error& e) {
      return error(res, status_of(e.kind()), paths.rewrite(e.what()));
    } catch (const std::exception& e) {
      // A libtorch error carries a C++ backtrace: the log has it, the client a line.
      log::error("serve: preview for ", u->name, " failed: ", e.what());
      return error(res, 500, "the preview failed (the server's log says why)");
    }
    std::ifstream f(png, std::ios::binary);
    res.set_content(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()), "image/png");
  }

  // One stream for a page: each job the user sees, once and then whenever its view changes,
  // checked twice a second; a comment line every 5 s, so that a client that went away is noticed
  // and its slot freed. It ends when the client goes or the server stops.
  void events(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    std::shared_ptr<void> slot = c_.long_responses.acquire(u->id);
    if (!slot) return error(res, 429, "you have " + std::to_string(c_.max_long_per_user) + " downloads and event streams open; close one");
    ApiContext* c = &c_;
    auto sent = std::make_shared<std::map<int64_t, std::string>>();
    auto ticks = std::make_shared<int>(0);
    res.set_header("Cache-Control", "no-store");
    res.set_chunked_content_provider("text/event-stream", [c, who = *u, slot, sent, ticks](size_t, httplib::DataSink& sink) {
      // httplib 0.11 asks the connection only when it writes: a client that left is noticed
      // here, within half a second, and its slot is free again.
      if (!sink.is_writable()) return false;
      std::string out;
      for (const JobRecord& j : c->store.jobs_of(who)) {
        std::string view = json_text(job_view(j, *c));
        std::string& last = (*sent)[j.id];
        if (view != last) out += "data: " + view + "\n\n";
        last = std::move(view);
      }
      if (out.empty() && ++*ticks % 10 == 0) out = ": still here\n\n";
      if (!out.empty() && !sink.write(out.data(), out.size())) return false;
      if (c->stopping) {
        sink.done();
        return true;
      }
      for (int i = 0; i < 5 && !c->stopping; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return true;
    });
  }

  // Server-sent events: the job's view twice a second until it ends (the last event is its end).
  void stream(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    auto j = visible_job(*u, req.matches[1], res);
    if (!j) return;
    const int64_t id = j->id;
    std::shared_ptr<void> slot = c_.long_responses.acquire(u->id);
    if (!slot) return error(res, 429, "you have " + std::to_string(c_.max_long_per_user) + " downloads and event streams open; close one (GET /api/events follows every job in one)");
    ApiContext* c = &c_;
    res.set_header("Cache-Control", "no-store");
    res.set_chunked_content_provider("text/event-stream", [c, id, slot](size_t, httplib::DataSink& sink) {
      if (!sink.is_writable()) return false;
      std::optional<JobRecord> now = c->store.job(id);
      if (!now) return false;
      const std::string event = "data: " + json_text(job_view(*now, *c)) + "\n\n";
      if (!sink.write(event.data(), event.size())) return false;
      const bool over = now->state != JobState::Queued && now->state != JobState::Running;
      if (over || c->stopping) {
        sink.done();
        return true;
      }
      for (int i = 0; i < 5 && !c->stopping; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return true;
    });
  }

  void create_upload(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    const std::optional<json> parsed = json_body(req, res);
    if (!parsed) return;
    const json& body = *parsed;
    if (!body.contains("name") || !body["name"].is_string() || !valid_output_name(body["name"]))
      return error(res, 400, "name: a plain file name with an extension is required");
    if (!body.contains("size") || !body["size"].is_number_integer() || body["size"].get<int64_t>() <= 0)
      return error(res, 400, "size: the file's size in bytes is required");
    if (body["size"].get<int64_t>() > c_.max_upload_bytes)
      return error(res, 413, "uploads are limited to " + std::to_string(c_.max_upload_bytes) + " bytes");
    const Uploads::Outcome made = c_.uploads.create(*u, body["name"], body["size"], c_.max_upload_bytes_per_user);
    if (made.status != 201) return error(res, made.status, made.error);
    res.set_header("Location", "/api/uploads/" + made.upload.id);
    reply(res, 201, upload_view(made.upload));
  }

  static json upload_view(const Store::Upload& up) {
    return {{"id", up.id}, {"name", up.name}, {"size", up.size}, {"received", up.received}, {"complete", up.complete}};
  }

  std::optional<Store::Upload> visible_upload(const User& u, const std::string& id, httplib::Response& res) {
    auto up = c_.store.upload(id);
    if (!up || up->user_id != u.id) {
      error(res, 404, "no upload " + id);
      return std::nullopt;
    }
    return up;
  }

  // PUT with "Content-Range: bytes A-B/N": the bytes A..B of the file, A = what arrived so far.
  void put_chunk(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    auto up = visible_upload(*u, req.matches[1], res);
    if (!up) return;
    long long a = -1, b = -1, n = -1;
    const std::string range = req.get_header_value("Content-Range");
    if (std::sscanf(range.c_str(), "bytes %lld-%lld/%lld", &a, &b, &n) != 3 || a < 0 || b < a || n != up->size ||
        b - a + 1 != (long long)req.body.size())
      return error(res, 400, "give Content-Range: bytes A-B/" + std::to_string(up->size) + " matching the body");
    const Uploads::Outcome o = c_.uploads.append(*up, a, req.body);
    json v = upload_view(o.upload);
    if (!o.error.empty()) v["error"] = o.error;
    reply(res, o.status, v);
  }

  void media_list(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    int root = 0;
    if (req.has_param("root")) {
      const std::string r = req.get_param_value("root");
      if (r.empty() || r.size() > 4 || r.find_first_not_of("0123456789") != std::string::npos || std::stoi(r) >= int(c_.media.size()))
        return error(res, 400, "root must be a media root's index, 0-" + std::to_string(c_.media.size() - 1));
      root = std::stoi(r);
    }
    Resolved why;
    auto entries = c_.media.list(req.get_param_value("path"), root, &why);
    if (!entries) return error(res, why.status == Resolved::Status::Outside ? 403 : 404, why.why);
    json list = json::array();
    for (const MediaEntry& e : *entries) list.push_back({{"name", e.name}, {"dir", e.directory}, {"size", e.size}});
    reply(res, 200, {{"root", root}, {"roots", c_.media.size()}, {"entries", list}});
  }

  void health(const httplib::Request&, httplib::Response& res) { reply(res, 200, {{"status", "ok"}, {"version", version()}}); }

  void page(const httplib::Request&, httplib::Response& res) {
    // The page is ours alone: no framing by other sites, no scripts from anywhere else.
    res.set_header("Content-Security-Policy", "default-src 'self'; img-src 'self' blob:; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_content(web_page(), "text/html; charset=utf-8");
  }

  void openapi(const httplib::Request&, httplib::Response& res) { res.set_content(openapi_document(), "application/json"); }

  void stages(const httplib::Request& req, httplib::Response& res) {
    if (!user(req, res)) return;
    json list = json::array();
    for (const StageInfo& st : list_stages()) {
      json options = json::array();
      for (const StageOptionInfo& o : st.options)
        options.push_back({{"name", o.name}, {"kind", o.kind}, {"default", o.default_value}, {"allowed", o.allowed}, {"help", o.help},
                           {"opens", o.opens}});
      list.push_back({{"name", st.name}, {"summary", st.summary}, {"options", options}});
    }
    reply(res, 200, {{"stages", list}});
  }

  void list_jobs(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    json list = json::array();
    for (const JobRecord& j : c_.store.jobs_of(*u)) list.push_back(job_view(j, c_));
    reply(res, 200, {{"jobs", list}});
  }

  void get_job(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    if (auto j = visible_job(*u, req.matches[1], res)) reply(res, 200, job_view(*j, c_));
  }

  void job_events(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    auto j = visible_job(*u, req.matches[1], res);
    if (!j) return;
    json list = json::array();
    const ClientPaths paths = job_paths(*j, c_);
    for (const JobEvent& e : c_.store.events(j->id))
      list.push_back({{"time", e.time}, {"kind", e.kind}, {"message", paths.rewrite(e.message)}});
    reply(res, 200, {{"events", list}});
  }

  void cancel(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    auto j = visible_job(*u, req.matches[1], res);
    if (!j) return;
    if (!c_.store.request_cancel(j->id)) return error(res, 409, std::string("job is ") + job_state_name(j->state));
    reply(res, 202, job_view(*c_.store.job(j->id), c_));
  }

  void retry(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    auto j = visible_job(*u, req.matches[1], res);
    if (!j) return;
    if (!c_.store.retry(j->id)) return error(res, 409, std::string("job is ") + job_state_name(j->state));
    c_.workers.wake();
    reply(res, 202, job_view(*c_.store.job(j->id), c_));
  }

  void get_upload(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    if (auto up = visible_upload(*u, req.matches[1], res)) reply(res, 200, upload_view(*up));
  }

  void models(const httplib::Request& req, httplib::Response& res) {
    if (!user(req, res)) return;
    json list = json::array();
    try {
      for (const ModelEntry& m : list_models())
        list.push_back({{"name", m.name}, {"task", m.task}, {"architecture", m.architecture}, {"scale", m.scale},
                        {"description", m.description}, {"license", m.license}, {"catalog", m.in_catalog},
                        {"installed", m.installed}, {"source", m.source}});
    } catch (const Error& e) {
      return error(res, 500, e.what());
    }
    reply(res, 200, {{"models", list}});
  }

  // Installs a catalog model into the server's model cache, shared by every user: admins only.
  // Synchronous; one install at a time (the cache's contract, framelift/models.h).
  void install_model(const httplib::Request& req, httplib::Response& res) {
    auto u = user(req, res);
    if (!u) return;
    if (!u->admin) return error(res, 403, "only an admin installs models (they are shared by every user)");
    const std::optional<json> parsed = json_body(req, res);
    if (!parsed) return;
    if (!parsed->contains("name") || !(*parsed)["name"].is_string()) return error(res, 400, "give {\"name\": CATALOG_NAME}");
    const std::string name = (*parsed)["name"];
    std::lock_guard<std::mutex> one_at_a_time(install_mutex_);
    ModelInstallResult r;
    try {
      const std::vector<ModelEntry> known = list_models();
      if (std::none_of(known.begin(), known.end(), [&](const ModelEntry& m) { return m.in_catalog && m.name == name; }))
        return error(res, 404, "model '" + name + "': not in the catalog (GET /api/models lists it)");
      ModelInstallOptions install;
      install.download = c_.model_downloads;
      r = install_models({name}, install);
    } catch (const Error& e) {
      return error(res, 500, e.what());
    }
    if (!r.problems.empty()) {
      const ErrorKind k = r.problems.front().kind;
      return error(res, k == ErrorKind::Model ? 422 : 502, r.problems.front().message);
    }
    reply(res, 200, {{"installed", r.installed}, {"unchanged", r.unchanged}, {"notes", r.notes}});
  }

  ApiContext& c_;
  const PipelinePolicy policy_;
  std::mutex install_mutex_;
};

using Handler = void (Routes::*)(const httplib::Request&, httplib::Response&);

struct RouteEntry {
  const char* method;
  const char* path;  // as docs/openapi.json writes it: {id} a job, {upload} an upload
  Handler handle;
};

// Every route, once: what is registered, and what tests/server compares with docs/openapi.json.
constexpr RouteEntry kRoutes[] = {
    {"GET", "/", &Routes::page},
    {"GET", "/api/health", &Routes::health},
    {"GET", "/api/openapi.json", &Routes::openapi},
    {"POST", "/api/login", &Routes::login},
    {"GET", "/api/session", &Routes::session},
    {"POST", "/api/logout", &Routes::logout},
    {"GET", "/api/stages", &Routes::stages},
    {"GET", "/api/media", &Routes::media_list},
    {"POST", "/api/plan", &Routes::plan},
    {"POST", "/api/preview", &Routes::preview},
    {"POST", "/api/jobs", &Routes::create_job},
    {"GET", "/api/jobs", &Routes::list_jobs},
    {"GET", "/api/jobs/{id}", &Routes::get_job},
    {"GET", "/api/jobs/{id}/events", &Routes::job_events},
    {"GET", "/api/jobs/{id}/stream", &Routes::stream},
    {"GET", "/api/events", &Routes::events},
    {"POST", "/api/jobs/{id}/cancel", &Routes::cancel},
    {"POST", "/api/jobs/{id}/retry", &Routes::retry},
    {"GET", "/api/jobs/{id}/output", &Routes::output},
    {"POST", "/api/uploads", &Routes::create_upload},
    {"PUT", "/api/uploads/{upload}", &Routes::put_chunk},
    {"GET", "/api/uploads/{upload}", &Routes::get_upload},
    {"GET", "/api/models", &Routes::models},
    {"POST", "/api/models/install", &Routes::install_model},
};

// The path's parameters as httplib's regular expressions: job ids are decimal, upload ids hex.
std::string path_pattern(std::string path) {
  static const std::pair<std::string, std::string> params[] = {{"{id}", R"((\d{1,18}))"}, {"{upload}", "([0-9a-f]{24})"}};
  for (const auto& [param, pattern] : params)
    for (size_t at; (at = path.find(param)) != std::string::npos;) path.replace(at, param.size(), pattern);
  return path;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> api_routes() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const RouteEntry& r : kRoutes) out.emplace_back(r.method, r.path);
  return out;
}

void add_api_routes(httplib::Server& server, ApiContext& context) {
  auto routes = std::make_shared<Routes>(context);
  for (const RouteEntry& r : kRoutes) {
    const std::string pattern = path_pattern(r.path);
    const Handler handle = r.handle;
    auto call = [routes, handle](const httplib::Request& req, httplib::Response& res) { ((*routes).*handle)(req, res); };
    const std::string method = r.method;
    if (method == "GET") server.Get(pattern, call);
    else if (method == "POST") server.Post(pattern, call);
    else if (method == "PUT") server.Put(pattern, call);
  }
}

}  // namespace framelift::server
