#pragma once
// What the server tests share: a site (a data folder, a media root holding a real clip, a folder
// outside it with links out of the root), tokens, a client, and submitting and awaiting jobs.
#include <httplib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/server_process.h"

namespace framelift::test {

struct Site {
  std::filesystem::path dir, data, media, outside;
  Site();
  std::string token(const std::string& user, bool admin = false) const;  // `serve token add`
  std::vector<std::string> args() const;  // --listen on a free loopback port, --data, --media
};

httplib::Headers bearer(const std::string& token);
std::unique_ptr<httplib::Client> client(const ServerProcess& s);

// The job request the tests submit: a resize into lossless FFV1, in segments of 10 frames.
std::string job_body(const std::string& input = "clips/cfr.mkv");
// POSTs a job, expects 201; its id, or -1.
int64_t submit(httplib::Client& c, const std::string& token, const std::string& body);
// Polls the job until it is neither queued nor running; fails the test after `seconds`.
nlohmann::json wait_until_finished(httplib::Client& c, const std::string& token, int64_t id, int seconds = 120);

// clips/cfr.mkv through `pipeline` as a job of 10-frame segments into FFV1, run to its end: the
// output's path, or "" (and a test failure naming the job and `log`) when it did not finish done.
std::filesystem::path run_job(httplib::Client& c, const std::string& token, const Site& site, const std::string& pipeline,
                              const std::string& log);

// The option names GET /api/stages lists for `stage` (none: a test failure).
std::vector<std::string> stage_option_names(httplib::Client& c, const std::string& token, const std::string& stage);

}  // namespace framelift::test
