#pragma once
// The server's state in SQLite (DATA/server.db): users, their API tokens (SHA-256 of the token,
// never the token), jobs and each job's events. What a restart keeps: the queue, every job's
// state and history; a job that was running when the server died goes back to the queue and
// resumes from its job folder (docs/server.md).
//
// Thread-safety: every member may be called from any thread; calls are serialised.
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/sqlite_db.h"

namespace framelift::server {

struct User {
  int64_t id = 0;
  std::string name;
  bool admin = false;
};

enum class JobState { Queued, Running, Done, Failed, Cancelled };
const char* job_state_name(JobState s);

// What a client asked for, validated (paths resolved) by the API before it is stored.
struct JobSpec {
  std::string input;        // absolute, inside a media root
  std::string output_name;  // a plain file name; the file lives in DATA/outputs/ID/
  std::string pipeline;
  nlohmann::json options = nlohmann::json::object();  // codec, crf, preset, pix_fmt, segment_frames, max_frames
  int priority = 0;         // higher runs first
};

struct JobRecord {
  int64_t id = 0, user_id = 0;
  std::string user;
  JobSpec spec;
  JobState state = JobState::Queued;
  int64_t frames_in = 0, frames_total = 0;
  double fps = 0;
  std::string error;
  double created = 0, started = 0, finished = 0;  // Unix seconds; 0: not yet
  bool cancel_requested = false;
};

struct JobEvent {
  double time = 0;
  std::string kind, message;
};

class Store {
 public:
  // Opens or creates DATA/server.db; a write waits up to `busy_timeout_ms` for a lock another
  // connection holds (sqlite_db.h). Throws Error(Output).
  explicit Store(const std::filesystem::path& data_dir, int busy_timeout_ms = 5000);

  // A new random token for `user` (created when new; `admin` only sets a new user's role).
  std::string add_token(const std::string& user, bool admin);
  std::optional<User> user_for_token(const std::string& token);
  // Revoking takes effect at the next request, also in a running server (lookups are never
  // cached), and ends the user's browser sessions.
  int revoke_tokens(const std::string& user);                       // all of a user's; how many
  std::optional<std::string> revoke_token(const std::string& token);  // the user it was, or nullopt
  struct TokenInfo {
    std::string user;
    bool admin = false;
    std::string hash_prefix;  // the first 12 hex digits of its SHA-256: which one, never the token
    double created = 0;
  };
  std::vector<TokenInfo> tokens();

  // A browser session for `user`: a random cookie value and a CSRF token (both returned once;
  // the cookie is stored hashed). Sessions last 12 hours.
  struct Session {
    std::string cookie, csrf;
  };
  Session add_session(const User& user);
  // The user and CSRF token of a live session cookie.
  std::optional<std::pair<User, std::string>> session_user(const std::string& cookie);
  void end_session(const std::string& cookie);

  int64_t add_job(const User& user, const JobSpec& spec);
  std::optional<JobRecord> job(int64_t id);
  std::vector<JobRecord> jobs_of(const User& user);  // an admin's: everyone's
  int active_jobs(int64_t user_id);                  // queued or running

  // The next queued job (highest priority, then oldest), marked running. nullopt: none queued.
  std::optional<JobRecord> claim_next();
  void record_progress(int64_t id, int64_t frames_in, int64_t frames_total, double fps);
  void finish(int64_t id, JobState state, const std::string& error = "");
  // Running -> queued again (the server stopped under it): its job folder resumes it.
  void requeue(int64_t id, const std::string& why);
  // Queued: cancelled at once. Running: flagged, the worker stops it. False: already finished.
  bool request_cancel(int64_t id);
  bool cancel_requested(int64_t id);
  // Failed or cancelled -> queued. False otherwise.
  bool retry(int64_t id);
  // At start-up: every job left running by a dead server goes back to the queue. Returns how many.
  int requeue_interrupted();

  // Uploads (resumable: a client sends byte ranges in order and asks how much arrived).
  struct Upload {
    std::string id, name;
    int64_t user_id = 0, size = 0, received = 0;
    bool complete = false;
  };
  Upload add_upload(const User& user, const std::string& name, int64_t size);
  std::optional<Upload> upload(const std::string& id);
  void record_upload(const std::string& id, int64_t received, bool complete);
  std::vector<Upload> uploads_of(int64_t user_id);
  // The bytes every upload in progress, of any user, has declared and not yet sent: what their
  // next chunks will take from the data folder's disk.
  int64_t bytes_to_arrive();

  void add_event(int64_t id, const std::string& kind, const std::string& message);
  std::vector<JobEvent> events(int64_t id);

 private:
  std::optional<JobRecord> read_job(Statement& s);

  std::mutex mutex_;
  Database db_;
};

// SHA-256 hex of a token: what the database keeps.
std::string token_hash(const std::string& token);

}  // namespace framelift::server
