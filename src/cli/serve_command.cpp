#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "cli/commands.h"
#include "server/serve.h"
#include "server/store.h"
#include "framelift/error.h"

namespace framelift::cli {
namespace {

void add_token_add(CLI::App& token, Command& selected) {
  auto* add = token.add_subcommand("add", "Create a user (if new) and print a new API token for them, once");
  auto name = std::make_shared<std::string>();
  auto data = std::make_shared<std::string>();
  auto admin = std::make_shared<bool>(false);
  add->add_option("name", *name, "User name")->required();
  add->add_option("--data", *data, "The server's data folder")->required();
  add->add_flag("--admin", *admin, "A new user who sees and manages every user's jobs");
  add->footer("The token is stored hashed (SHA-256); keep the printed copy.\nExample:\n  framelift serve token add alice --data /srv/framelift");
  add->callback([=, &selected] {
    selected = [=] {
      std::error_code ec;
      std::filesystem::create_directories(*data, ec);
      server::Store store(*data);
      std::printf("%s\n", store.add_token(*name, *admin).c_str());
      return 0;
    };
  });
}

// Revoking needs no running server, nor stopping one: a server looks every token up anew.
void add_token_revoke(CLI::App& token, Command& selected) {
  auto* revoke = token.add_subcommand("revoke", "Revoke a user's tokens (all, or the one given), ending their sessions");
  auto name = std::make_shared<std::string>();
  auto one = std::make_shared<std::string>();
  auto data = std::make_shared<std::string>();
  revoke->add_option("name", *name, "User whose tokens are all revoked");
  revoke->add_option("--token", *one, "Revoke only this token");
  revoke->add_option("--data", *data, "The server's data folder")->required()->check(CLI::ExistingDirectory);
  revoke->footer("Examples:\n  framelift serve token revoke alice --data /srv/framelift\n"
                 "  framelift serve token revoke --token flk_... --data /srv/framelift");
  revoke->callback([=, &selected] {
    selected = [=] {
      if (name->empty() == one->empty()) throw Error(ErrorKind::Usage, "serve token revoke: give a user name or --token TOKEN (one of them)");
      server::Store store(*data);
      if (!one->empty()) {
        const std::optional<std::string> user = store.revoke_token(*one);
        if (!user) throw Error(ErrorKind::Usage, "--token: no such token in " + *data);
        std::printf("revoked one token of %s\n", user->c_str());
        return 0;
      }
      const int n = store.revoke_tokens(*name);
      if (n == 0) throw Error(ErrorKind::Usage, "serve token revoke: " + *name + " has no tokens in " + *data);
      std::printf("revoked %d token(s) of %s\n", n, name->c_str());
      return 0;
    };
  });
}

void add_token_list(CLI::App& token, Command& selected) {
  auto* list = token.add_subcommand("list", "List the users and their tokens (by the start of each token's hash)");
  auto data = std::make_shared<std::string>();
  list->add_option("--data", *data, "The server's data folder")->required()->check(CLI::ExistingDirectory);
  list->callback([=, &selected] {
    selected = [=] {
      server::Store store(*data);
      for (const server::Store::TokenInfo& t : store.tokens())
        std::printf("%-16s %-5s sha256:%s  created %.0f\n", t.user.c_str(), t.admin ? "admin" : "user", t.hash_prefix.c_str(), t.created);
      return 0;
    };
  });
}

void add_token_command(CLI::App& serve, Command& selected) {
  auto* token = serve.add_subcommand("token", "Manage the server's API tokens");
  token->require_subcommand(1);
  add_token_add(*token, selected);
  add_token_revoke(*token, selected);
  add_token_list(*token, selected);
}

// FRAMELIFT_SERVE_BUSY_TIMEOUT_MS: how long a database write waits for a lock another
// connection holds (docs/server.md); an environment knob, not an option, for tests that provoke
// the wait and for admins who script long sqlite3 sessions beside the server.
int busy_timeout_from_env(int fallback) {
  const char* v = std::getenv("FRAMELIFT_SERVE_BUSY_TIMEOUT_MS");
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long ms = std::strtol(v, &end, 10);
  if (*end != '\0' || ms < 0 || ms > 3600000)
    throw Error(ErrorKind::Usage, std::string("FRAMELIFT_SERVE_BUSY_TIMEOUT_MS=") + v + ": give milliseconds, 0-3600000");
  return int(ms);
}

}  // namespace

void add_serve_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("serve", "Serve the REST API for a team sharing this machine (docs/server.md)");
  auto o = std::make_shared<server::ServeOptions>();
  auto media = std::make_shared<std::vector<std::string>>();
  auto devices = std::make_shared<std::string>();
  cmd->add_option("--listen", o->listen, "HOST:PORT; loopback unless HTTPS or --insecure-http")->capture_default_str();
  cmd->add_option("--data", o->data, "Folder for the queue (server.db), job folders and outputs");
  cmd->add_option("--media", *media, "A folder inputs may be read from (repeat for more)");
  cmd->add_option("--devices", *devices, "One worker slot per device: cuda:0,cuda:1 (default: one slot)");
  cmd->add_option("--tls-cert", o->tls_cert, "PEM certificate: serve HTTPS");
  cmd->add_option("--tls-key", o->tls_key, "PEM private key of --tls-cert");
  cmd->add_flag("--insecure-http", o->insecure_http, "Allow plain HTTP on a non-loopback address (tokens in the clear)");
  cmd->add_option("--max-jobs-per-user", o->max_active_jobs_per_user, "Queued plus running jobs a user may have")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--max-upload-bytes-per-user", o->max_upload_bytes_per_user,
                  "Bytes one user's uploads may hold together (in progress and complete); past it 413")
      ->check(CLI::Range(int64_t(1), std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--min-free-bytes", o->min_free_bytes,
                  "Free bytes kept on the data folder's disk: uploads and new jobs get 507 below it, running jobs stop")
      ->check(CLI::Range(int64_t(0), std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--price-per-hour", o->price_per_hour, "USD one worker slot (GPU) costs per hour: jobs show what they spent")
      ->check(CLI::Range(0.0, 10000.0))
      ->capture_default_str();
  cmd->add_option("--http-threads", o->http.threads, "Request threads (event streams and downloads take at most half)")
      ->check(CLI::Range(4, 1024))
      ->capture_default_str();
  auto offline = std::make_shared<bool>(false);
  cmd->add_flag("--offline-models", *offline, "The model library installs from local npm tarballs only, never downloads");
  cmd->footer(
      "Examples:\n"
      "  framelift serve token add alice --data /srv/framelift\n"
      "  framelift serve --data /srv/framelift --media /videos\n"
      "  ssh -L 8642:localhost:8642 gpu-box      # then http://localhost:8642 on your machine");
  add_token_command(*cmd, selected);
  cmd->callback([=, &selected] {
    if (selected) return;  // a `serve token` command chose already
    selected = [=] {
      server::ServeOptions options = *o;
      options.model_downloads = !*offline;
      options.busy_timeout_ms = busy_timeout_from_env(options.busy_timeout_ms);
      for (const std::string& m : *media) options.media.emplace_back(m);
      for (size_t start = 0; !devices->empty() && start <= devices->size();) {
        const size_t comma = devices->find(',', start);
        options.devices.push_back(devices->substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      options.on_listening = [](const std::string& url) {
        std::printf("framelift serve: listening on %s\n", url.c_str());
        std::fflush(stdout);
      };
      server::serve(options);
      return 0;
    };
  });
}

}  // namespace framelift::cli
