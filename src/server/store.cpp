#include "server/store.h"

#include <chrono>
#include <fstream>

#include "net/sha256.h"
#include "util/error.h"
#include "util/json_text.h"
#include "util/str.h"

namespace framelift::server {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, admin INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), csrf TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),
  input TEXT NOT NULL, output_name TEXT NOT NULL, pipeline TEXT NOT NULL, options TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL,
  frames_in INTEGER NOT NULL DEFAULT 0, frames_total INTEGER NOT NULL DEFAULT 0, fps REAL NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '', cancel_requested INTEGER NOT NULL DEFAULT 0,
  created REAL NOT NULL, started REAL NOT NULL DEFAULT 0, finished REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS uploads (id TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), name TEXT NOT NULL,
  size INTEGER NOT NULL, received INTEGER NOT NULL DEFAULT 0, complete INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id),
  time REAL NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL);
)";

constexpr const char* kJobColumns =
    "SELECT jobs.id, user_id, users.name, input, output_name, pipeline, options, priority, state, frames_in, frames_total, "
    "fps, error, created, started, finished, cancel_requested FROM jobs JOIN users ON users.id = jobs.user_id ";

double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

JobState state_from(const std::string& s) {
  for (JobState st : {JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled})
    if (s == job_state_name(st)) return st;
  return JobState::Failed;
}

constexpr double kSessionSeconds = 12 * 3600;

// 32 bytes from the kernel's CSPRNG, as hex: 256 bits, unguessable, and safe in a header.
std::string random_token(const std::string& prefix = "flk_") {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!urandom.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    throw Error(ErrorKind::Resource, "/dev/urandom: cannot read random bytes for a token");
  static const char* hex = "0123456789abcdef";
  std::string t = prefix;
  for (unsigned char b : bytes) t += {hex[b >> 4], hex[b & 15]};
  return t;
}

}  // namespace

const char* job_state_name(JobState s) {
  switch (s) {
    case JobState::Queued: return "queued";
    case JobState::Running: return "running";
    case JobState::Done: return "done";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
  }
  return "failed";
}

std::string token_hash(const std::string& token) {
  net::Sha256 h;
  h.update(token);
  return h.hex();
}

Store::Store(const std::filesystem::path& data_dir, int busy_timeout_ms) : db_(data_dir / "server.db", busy_timeout_ms) {
  db_.exec(kSchema);
}

std::string Store::add_token(const std::string& user, bool admin) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.prepare("INSERT OR IGNORE INTO users (name, admin) VALUES (?, ?)").bind(1, user).bind(2, int64_t(admin)).run();
  Statement id = db_.prepare("SELECT id FROM users WHERE name = ?");
  id.bind(1, user);
  id.step();
  const std::string token = random_token();
  db_.prepare("INSERT INTO tokens (hash, user_id, created) VALUES (?, ?, ?)").bind(1, token_hash(token)).bind(2, id.integer(0)).bind(3, now()).run();
  t.commit();
  return token;
}

std::optional<User> Store::user_for_token(const std::string& token) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT users.id, users.name, users.admin FROM tokens JOIN users ON users.id = tokens.user_id WHERE hash = ?");
  s.bind(1, token_hash(token));
  if (!s.step()) return std::nullopt;
  return User{s.integer(0), s.text(1), s.integer(2) != 0};
}

int Store::revoke_tokens(const std::string& user) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.prepare("DELETE FROM tokens WHERE user_id = (SELECT id FROM users WHERE name = ?)").bind(1, user).run();
  const int n = db_.changes();
  // A session came from one of those tokens: it goes with them.
  db_.prepare("DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = ?)").bind(1, user).run();
  t.commit();
  return n;
}

std::optional<std::string> Store::revoke_token(const std::string& token) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  Statement who = db_.prepare("SELECT users.id, users.name FROM tokens JOIN users ON users.id = tokens.user_id WHERE hash = ?");
  who.bind(1, token_hash(token));
  if (!who.step()) return std::nullopt;
  const int64_t id = who.integer(0);
  std::string name = who.text(1);
  db_.prepare("DELETE FROM tokens WHERE hash = ?").bind(1, token_hash(token)).run();
  // Sessions do not record the token they were opened with: all of the user's end.
  db_.prepare("DELETE FROM sessions WHERE user_id = ?").bind(1, id).run();
  t.commit();
  return name;
}

std::vector<Store::TokenInfo> Store::tokens() {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT users.name, users.admin, substr(hash, 1, 12), created FROM tokens JOIN users ON users.id = tokens.user_id "
                            "ORDER BY users.name, created");
  std::vector<TokenInfo> out;
  while (s.step()) out.push_back({s.text(0), s.integer(1) != 0, s.text(2), s.real(3)});
  return out;
}

Store::Session Store::add_session(const User& user) {
  std::lock_guard lock(mutex_);
  Session s{random_token("fls_"), random_token("")};
  db_.prepare("DELETE FROM sessions WHERE expires < ?").bind(1, now()).run();
  db_.prepare("INSERT INTO sessions (hash, user_id, csrf, expires) VALUES (?, ?, ?, ?)")
      .bind(1, token_hash(s.cookie))
      .bind(2, user.id)
      .bind(3, s.csrf)
      .bind(4, now() + kSessionSeconds)
      .run();
  return s;
}

std::optional<std::pair<User, std::string>> Store::session_user(const std::string& cookie) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare(
      "SELECT users.id, users.name, users.admin, csrf FROM sessions JOIN users ON users.id = sessions.user_id WHERE hash = ? AND expires > ?");
  s.bind(1, token_hash(cookie)).bind(2, now());
  if (!s.step()) return std::nullopt;
  return std::make_pair(User{s.integer(0), s.text(1), s.integer(2) != 0}, s.text(3));
}

void Store::end_session(const std::string& cookie) {
  std::lock_guard lock(mutex_);
  db_.prepare("DELETE FROM sessions WHERE hash = ?").bind(1, token_hash(cookie)).run();
}

int64_t Store::add_job(const User& user, const JobSpec& spec) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.prepare("INSERT INTO jobs (user_id, input, output_name, pipeline, options, priority, state, created) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?)")
      .bind(1, user.id)
      .bind(2, spec.input)
      .bind(3, spec.output_name)
      .bind(4, spec.pipeline)
      .bind(5, json_text(spec.options))
      .bind(6, int64_t(spec.priority))
      .bind(7, now())
      .run();
  const int64_t id = db_.last_insert_id();
  db_.prepare("INSERT INTO events (job_id, time, kind, message) VALUES (?, ?, 'queued', ?)").bind(1, id).bind(2, now()).bind(3, "queued by " + user.name).run();
  t.commit();
  return id;
}

std::optional<JobRecord> Store::read_job(Statement& s) {
  if (!s.step()) return std::nullopt;
  JobRecord r;
  r.id = s.integer(0);
  r.user_id = s.integer(1);
  r.user = s.text(2);
  r.spec.input = s.text(3);
  r.spec.output_name = s.text(4);
  r.spec.pipeline = s.text(5);
  r.spec.options = nlohmann::json::parse(s.text(6), nullptr, false);
  r.spec.priority = int(s.integer(7));
  r.state = state_from(s.text(8));
  r.frames_in = s.integer(9);
  r.frames_total = s.integer(10);
  r.fps = s.real(11);
  r.error = s.text(12);
  r.created = s.real(13);
  r.started = s.real(14);
  r.finished = s.real(15);
  r.cancel_requested = s.integer(16) != 0;
  return r;
}

std::optional<JobRecord> Store::job(int64_t id) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare(std::string(kJobColumns) + "WHERE jobs.id = ?");
  s.bind(1, id);
  return read_job(s);
}

std::vector<JobRecord> Store::jobs_of(const User& user) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare(std::string(kJobColumns) + (user.admin ? "WHERE ? >= 0" : "WHERE user_id = ?") + " ORDER BY jobs.id DESC");
  s.bind(1, user.admin ? int64_t(0) : user.id);
  std::vector<JobRecord> out;
  while (auto r = read_job(s)) out.push_back(std::move(*r));
  return out;
}

int Store::active_jobs(int64_t user_id) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT COUNT(*) FROM jobs WHERE user_id = ? AND state IN ('queued', 'running')");
  s.bind(1, user_id);
  s.step();
  return int(s.integer(0));
}

std::optional<JobRecord> Store::claim_next() {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  Statement s = db_.prepare(std::string(kJobColumns) + "WHERE state = 'queued' ORDER BY priority DESC, jobs.id ASC LIMIT 1");
  std::optional<JobRecord> r = read_job(s);
  if (!r) return std::nullopt;
  db_.prepare("UPDATE jobs SET state = 'running', started = ? WHERE id = ?").bind(1, now()).bind(2, r->id).run();
  db_.prepare("INSERT INTO events (job_id, time, kind, message) VALUES (?, ?, 'started', '')").bind(1, r->id).bind(2, now()).run();
  t.commit();
  r->state = JobState::Running;
  return r;
}

void Store::record_progress(int64_t id, int64_t frames_in, int64_t frames_total, double fps) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE jobs SET frames_in = ?, frames_total = ?, fps = ? WHERE id = ?").bind(1, frames_in).bind(2, frames_total).bind(3, fps).bind(4, id).run();
}

void Store::finish(int64_t id, JobState state, const std::string& error) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.prepare("UPDATE jobs SET state = ?, error = ?, finished = ? WHERE id = ?").bind(1, std::string(job_state_name(state))).bind(2, error).bind(3, now()).bind(4, id).run();
  db_.prepare("INSERT INTO events (job_id, time, kind, message) VALUES (?, ?, ?, ?)").bind(1, id).bind(2, now()).bind(3, std::string(job_state_name(state))).bind(4, error).run();
  t.commit();
}

void Store::requeue(int64_t id, const std::string& why) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.prepare("UPDATE jobs SET state = 'queued' WHERE id = ? AND state = 'running'").bind(1, id).run();
  db_.prepare("INSERT INTO events (job_id, time, kind, message) VALUES (?, ?, 'requeued', ?)").bind(1, id).bind(2, now()).bind(3, why).run();
  t.commit();
}

bool Store::request_cancel(int64_t id) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.prepare("UPDATE jobs SET state = 'cancelled', finished = ? WHERE id = ? AND state = 'queued'").bind(1, now()).bind(2, id).run();
  bool changed = db_.changes() > 0;
  if (!changed) {
    db_.prepare("UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'").bind(1, id).run();
    changed = db_.changes() > 0;
  }
  if (changed) db_.prepare("INSERT INTO events (job_id, time, kind, message) VALUES (?, ?, 'cancel', '')").bind(1, id).bind(2, now()).run();
  t.commit();
  return changed;
}

bool Store::cancel_requested(int64_t id) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT cancel_requested FROM jobs WHERE id = ?");
  s.bind(1, id);
  return s.step() && s.integer(0) != 0;
}

bool Store::retry(int64_t id) {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.prepare("UPDATE jobs SET state = 'queued', error = '', cancel_requested = 0, finished = 0 WHERE id = ? AND state IN ('failed', 'cancelled')")
      .bind(1, id)
      .run();
  const bool changed = db_.changes() > 0;
  if (changed) db_.prepare("INSERT INTO events (job_id, time, kind, message) VALUES (?, ?, 'retry', '')").bind(1, id).bind(2, now()).run();
  t.commit();
  return changed;
}

int Store::requeue_interrupted() {
  std::lock_guard lock(mutex_);
  Transaction t(db_);
  db_.exec("INSERT INTO events (job_id, time, kind, message) SELECT id, strftime('%s','now'), 'requeued', "
           "'the server stopped while it ran; it resumes from its job folder' FROM jobs WHERE state = 'running'");
  db_.exec("UPDATE jobs SET state = 'queued' WHERE state = 'running'");
  const int n = db_.changes();
  t.commit();
  return n;
}

Store::Upload Store::add_upload(const User& user, const std::string& name, int64_t size) {
  std::lock_guard lock(mutex_);
  Upload u{random_token("").substr(0, 24), name, user.id, size, 0, false};
  db_.prepare("INSERT INTO uploads (id, user_id, name, size, created) VALUES (?, ?, ?, ?, ?)")
      .bind(1, u.id)
      .bind(2, user.id)
      .bind(3, name)
      .bind(4, size)
      .bind(5, now())
      .run();
  return u;
}

std::optional<Store::Upload> Store::upload(const std::string& id) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT id, name, user_id, size, received, complete FROM uploads WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return Upload{s.text(0), s.text(1), s.integer(2), s.integer(3), s.integer(4), s.integer(5) != 0};
}

void Store::record_upload(const std::string& id, int64_t received, bool complete) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE uploads SET received = ?, complete = ? WHERE id = ?").bind(1, received).bind(2, int64_t(complete)).bind(3, id).run();
}

std::vector<Store::Upload> Store::uploads_of(int64_t user_id) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT id, name, user_id, size, received, complete FROM uploads WHERE user_id = ?");
  s.bind(1, user_id);
  std::vector<Upload> out;
  while (s.step()) out.push_back({s.text(0), s.text(1), s.integer(2), s.integer(3), s.integer(4), s.integer(5) != 0});
  return out;
}

int64_t Store::bytes_to_arrive() {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT COALESCE(SUM(size - received), 0) FROM uploads WHERE complete = 0");
  return s.step() ? s.integer(0) : 0;
}

void Store::add_event(int64_t id, const std::string& kind, const std::string& message) {
  std::lock_guard lock(mutex_);
  db_.prepare("INSERT INTO events (job_id, time, kind, message) VALUES (?, ?, ?, ?)").bind(1, id).bind(2, now()).bind(3, kind).bind(4, message).run();
}

std::vector<JobEvent> Store::events(int64_t id) {
  std::lock_guard lock(mutex_);
  Statement s = db_.prepare("SELECT time, kind, message FROM events WHERE job_id = ? ORDER BY id");
  s.bind(1, id);
  std::vector<JobEvent> out;
  while (s.step()) out.push_back({s.real(0), s.text(1), s.text(2)});
  return out;
}

}  // namespace framelift::server
