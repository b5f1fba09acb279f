// framelift serve against clients that mean it harm (issue 30, cases 3, 5, 6 and 7), each on a
// real server process on loopback: connections that drip or never end their headers, event
// streams opened until the threads run out, failed logins meant to lock others out, revoked
// tokens, malformed and out-of-range requests, names that are not UTF-8 or need escaping, and a
// preview sized to exhaust memory.
#include <gtest/gtest.h>
#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "server/server_process.h"
#include "server/server_site.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A raw TCP connection to the server, for what httplib's client will not send.
int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// What the server sends on `fd` within `ms` (until it closes or the time is up).
std::string read_for(int fd, int ms) {
  std::string got;
  const auto end = Clock::now() + std::chrono::milliseconds(ms);
  char buf[4096];
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, size_t(n));
  }
  return got;
}

// The server's resident memory, from /proc.
int64_t rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

// An event stream held open on a raw connection; its status code, read from the first line.
struct HeldStream {
  int fd = -1;
  int status = 0;
  HeldStream(int port, const std::string& path, const std::string& token) {
    fd = connect_to(port);
    send_all(fd, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token + "\r\n\r\n");
    std::string head;
    char c;
    const auto end = Clock::now() + std::chrono::seconds(10);
    while (head.find("\r\n") == std::string::npos && Clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) > 0 && recv(fd, &c, 1, 0) == 1) head += c;
    }
    if (head.rfind("HTTP/1.1 ", 0) == 0) status = std::stoi(head.substr(9, 3));
  }
  ~HeldStream() {
    if (fd >= 0) close(fd);
  }
};

// Health answers, each within `seconds`, `n` times in a row.
void expect_healthy(const ServerProcess& server, int n = 5, int seconds = 3) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_connection_timeout(seconds, 0);
  c.set_read_timeout(seconds, 0);
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    auto r = c.Get("/api/health");
    ASSERT_TRUE(r) << "health did not answer within " << seconds << " s (try " << i << ")";
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(seconds));
  }
}

// Case 3: twelve sockets (forty here) dripping a header line every second held every thread of
// httplib's pool; the gate holds them without one, and cuts them off 10 s after their accept.
TEST(ServeHostile, HeaderDrippersDoNotStopTheServer) {
  Site site;
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  std::vector<int> drippers;
  for (int i = 0; i < 40; ++i) {
    const int fd = connect_to(server.port());
    ASSERT_GE(fd, 0);
    send_all(fd, "GET /api/health HTTP/1.1\r\nHost: localhost\r\n");
    drippers.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::thread drip([&] {
    for (int t = 0; t < 14 && !done; ++t) {
      for (int fd : drippers) send_all(fd, "X-Slow: " + std::to_string(t) + "\r\n");
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  expect_healthy(server, 10);
  // Past the head deadline each dripper has its 408 and a closed connection.
  const std::string answer = read_for(drippers.front(), 12000);
  done = true;
  drip.join();
  EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u) << answer;
  for (int fd : drippers) close(fd);
  expect_healthy(server);
}

// Case 3: one connection sending header lines without end grew the server by ~460 MiB before any
// authentication; now the head stops at 16 KiB with a 431, and the server stays its size.
TEST(ServeHostile, EndlessHeadersAreCutOffWithoutGrowingTheServer) {
  Site site;
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  expect_healthy(server, 1);
  const int64_t before = rss_kib(server.pid());
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  send_all(fd, "GET /api/health HTTP/1.1\r\nHost: localhost\r\n");
  const std::string line = "X-Endless: " + std::string(100, 'a') + "\r\n";
  size_t sent = 0;
  const size_t limit = size_t(64) << 20;
  std::string chunk;
  for (int i = 0; i < 100; ++i) chunk += line;
  while (sent < limit && send_all(fd, chunk)) sent += chunk.size();
  const std::string answer = read_for(fd, 2000);
  close(fd);
  EXPECT_LT(sent, limit) << "the server read 64 MiB of headers without closing the connection";
  EXPECT_NE(answer.find("431"), std::string::npos) << answer.substr(0, 200);
  const int64_t after = rss_kib(server.pid());
  EXPECT_LT(after - before, 16 * 1024) << "the server grew from " << before << " to " << after << " KiB";
  expect_healthy(server);
}

// Case 3: a page opened an event stream per queued job, each holding a pool thread, so eight
// queued jobs or two tabs froze the server. Now one stream follows every job (GET /api/events),
// long responses take at most half the threads and a user at most four, and health answers
// whatever they hold.
TEST(ServeHostile, EventStreamsTakeAShareOfTheThreadsNeverAll) {
  Site site;
  const std::string alice = site.token("alice"), bob = site.token("bob");
  std::vector<std::string> args = site.args();
  args.insert(args.end(), {"--http-threads", "8"});  // long responses: 4 at most in all
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  std::vector<std::unique_ptr<HeldStream>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<HeldStream>(server.port(), "/api/events", alice));
    EXPECT_EQ(held.back()->status, 200) << "stream " << i;
  }
  EXPECT_EQ(HeldStream(server.port(), "/api/events", alice).status, 429) << "a user's fifth long response";
  EXPECT_EQ(HeldStream(server.port(), "/api/events", bob).status, 429) << "past half the threads in all";
  expect_healthy(server, 10);
  auto c = client(server);
  EXPECT_EQ(c->Get("/api/jobs", bearer(bob))->status, 200);
  held.pop_back();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the server notices the closed stream at its next write
  EXPECT_EQ(HeldStream(server.port(), "/api/events", bob).status, 200);
}

// Case 3: the multiplexed stream carries each of the user's jobs, and only theirs.
TEST(ServeHostile, OneEventStreamFollowsEveryJobOfItsUser) {
  Site site;
  const std::string alice = site.token("alice"), bob = site.token("bob");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const int64_t a1 = submit(*c, alice, job_body()), a2 = submit(*c, alice, job_body()), b1 = submit(*c, bob, job_body());
  wait_until_finished(*c, alice, a2);
  wait_until_finished(*c, bob, b1);
  HeldStream s(server.port(), "/api/events", alice);
  ASSERT_EQ(s.status, 200);
  const std::string text = read_for(s.fd, 1500);
  std::set<int64_t> seen;
  for (size_t at = 0; (at = text.find("data: ", at)) != std::string::npos; at += 6) {
    const json j = json::parse(text.substr(at + 6, text.find('\n', at) - at - 6));
    seen.insert(j["id"].get<int64_t>());
    EXPECT_EQ(j["state"], "done");
  }
  EXPECT_EQ(seen, (std::set<int64_t>{a1, a2}));
}

// Case 5: the failed-login limit counted per address locked every user out, since all of them
// arrive as 127.0.0.1 through `ssh -L`. Unknown tokens still meet the limit; a known one never.
TEST(ServeHostile, OthersFailedLoginsNeverLockOutAValidToken) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  int refused = 0, limited = 0;
  for (int i = 0; i < 15; ++i) {
    const int status = c->Get("/api/jobs", bearer("flk_guess" + std::to_string(i)))->status;
    refused += status == 401;
    limited += status == 429;
  }
  EXPECT_EQ(refused, 10);
  EXPECT_EQ(limited, 5);
  EXPECT_EQ(c->Get("/api/jobs", bearer(token))->status, 200);
  auto login = c->Post("/api/login", json{{"token", token}}.dump(), "application/json");
  EXPECT_EQ(login->status, 200) << login->body;
}

// Case 5: a revoked token is refused by the running server at its next request, the user's
// other tokens stay, and revoking a user ends their browser sessions too.
TEST(ServeHostile, RevokedTokensAreRefusedAtOnce) {
  Site site;
  const std::string first = site.token("alice"), second = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto login = c->Post("/api/login", json{{"token", second}}.dump(), "application/json");
  ASSERT_EQ(login->status, 200);
  const std::string cookie = login->get_header_value("Set-Cookie").substr(0, login->get_header_value("Set-Cookie").find(';'));
  EXPECT_EQ(c->Get("/api/session", {{"Cookie", cookie}})->status, 200);

  auto list = framelift("serve token list --data " + shell_quote(site.data));
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(std::count(list.output.begin(), list.output.end(), '\n'), 2) << list.output;
  EXPECT_EQ(list.output.find(first), std::string::npos) << "the list shows hashes, never tokens";

  auto one = framelift("serve token revoke --token " + first + " --data " + shell_quote(site.data));
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(c->Get("/api/jobs", bearer(first))->status, 401);
  EXPECT_EQ(c->Get("/api/jobs", bearer(second))->status, 200);

  auto all = framelift("serve token revoke alice --data " + shell_quote(site.data));
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("revoked 1 token(s) of alice"), std::string::npos) << all.output;
  EXPECT_EQ(c->Get("/api/jobs", bearer(second))->status, 401);
  EXPECT_EQ(c->Get("/api/session", {{"Cookie", cookie}})->status, 401);

  auto again = framelift("serve token revoke alice --data " + shell_quote(site.data));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("alice has no tokens"), std::string::npos) << again.output;
}

// Case 7: every malformed or out-of-range request is a 400 naming what is wrong, never a 500 or
// a silently different request (a root of 2^32 was read as root 0).
TEST(ServeHostile, MalformedRequestsAre400) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const json good = json::parse(job_body());
  auto with = [&](const std::string& key, const json& value) {
    json b = good;
    b[key] = value;
    return b.dump();
  };
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{{"pipeline", 5},
                                                                           {"pipeline", nullptr},
                                                                           {"pipeline", json::array()},
                                                                           {"root", int64_t(1) << 32},
                                                                           {"root", -1},
                                                                           {"root", 1},
                                                                           {"root", 0.5},
                                                                           {"priority", int64_t(1) << 40},
                                                                           {"priority", "high"},
                                                                           {"segment_frames", uint64_t(1) << 63},
                                                                           {"crf", "x"},
                                                                           {"codec", "libx264 -y"}}) {
    auto r = c->Post("/api/jobs", bearer(token), with(key, value), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << key << "=" << value.dump() << ": " << r->body;
    EXPECT_NE(json::parse(r->body)["error"].get<std::string>().find(key), std::string::npos) << r->body;
  }
  for (const char* path : {"/api/media?root=abc", "/api/media?root=4294967296", "/api/media?root=-1", "/api/media?root=1"})
    EXPECT_EQ(c->Get(path, bearer(token))->status, 400) << path;
  EXPECT_EQ(c->Post("/api/plan", bearer(token), json{{"input", "clips/cfr.mkv"}, {"pipeline", 5}}.dump(), "application/json")->status, 400);
  EXPECT_EQ(c->Post("/api/preview", bearer(token), json{{"input", "clips/cfr.mkv"}, {"time", "x"}}.dump(), "application/json")->status, 400);
  EXPECT_EQ(c->Get("/api/jobs/999999999999999999", bearer(token))->status, 404);
  EXPECT_FALSE(fs::exists(site.data / "outputs")) << "no malformed request may have queued a job";
  expect_healthy(server, 1);
}

// docs/server.md cancels with `curl -X POST URL`, which sends no Content-Length: the server read
// on for a body until its 10 s grace was up, then answered 400 with nothing in it. A request
// without Content-Length or Transfer-Encoding has no body (RFC 9112, 6.3) and is answered at once.
TEST(ServeHostile, APostWithoutContentLengthHasNoBodyAndIsAnsweredAtOnce) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const int64_t id = submit(*c, token, job_body());
  ASSERT_GE(id, 0);
  // The job's own cancel (202, or 409 once it has finished), and one of a job that is not there.
  for (const int64_t target : {id, int64_t(999999)}) {
    const int fd = connect_to(server.port());
    ASSERT_GE(fd, 0);
    const auto t0 = Clock::now();
    ASSERT_TRUE(send_all(fd, "POST /api/jobs/" + std::to_string(target) + "/cancel HTTP/1.1\r\nHost: localhost\r\n"
                             "Authorization: Bearer " + token + "\r\nAccept: */*\r\n\r\n"));
    const std::string reply = read_for(fd, 5000);
    close(fd);
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
    const size_t body = reply.find("\r\n\r\n");
    ASSERT_NE(body, std::string::npos) << reply;
    const json answer = json::parse(reply.substr(body + 4), nullptr, false);
    if (target == id) {
      ASSERT_TRUE(reply.rfind("HTTP/1.1 202", 0) == 0 || reply.rfind("HTTP/1.1 409", 0) == 0) << reply;
      if (reply.rfind("HTTP/1.1 202", 0) == 0) EXPECT_EQ(answer.value("id", int64_t(-1)), id) << reply;
      else EXPECT_NE(answer.value("error", "").find("job is"), std::string::npos) << reply;
    } else {
      ASSERT_EQ(reply.rfind("HTTP/1.1 404", 0), 0u) << reply;
      EXPECT_TRUE(answer.contains("error")) << reply;
    }
  }
  expect_healthy(server, 1);
}

// Case 7: a name that is not UTF-8 made GET /api/media a 500, and a job whose error quoted one
// made the job, its stream and both job lists 500 for good. JSON replaces each invalid byte with
// U+FFFD (docs/server.md).
TEST(ServeHostile, NamesThatAreNotUtf8AreReplacedNotFatal) {
  Site site;
  const std::string token = site.token("alice");
  const std::string bad = std::string("clips/bad\xff\xfe") + ".mkv";
  std::ofstream(site.media / bad) << "not a video";
  fs::create_symlink(site.media / bad, site.media / "clips" / "link.mkv");  // canonical: the odd name
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const std::string replacement = "\xef\xbf\xbd";
  auto listing = c->Get("/api/media?path=clips", bearer(token));
  ASSERT_EQ(listing->status, 200) << listing->body;
  EXPECT_NE(listing->body.find("bad" + replacement + replacement + ".mkv"), std::string::npos) << listing->body;

  const int64_t id = submit(*c, token, job_body("clips/link.mkv"));
  const json failed = wait_until_finished(*c, token, id);
  EXPECT_EQ(failed["state"], "failed") << failed.dump();
  for (const std::string& path : std::vector<std::string>{"/api/jobs", "/api/jobs/" + std::to_string(id), "/api/jobs/" + std::to_string(id) + "/events"}) {
    auto r = c->Get(path, bearer(token));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    EXPECT_FALSE(json::parse(r->body, nullptr, false).is_discarded()) << path;
  }
  HeldStream s(server.port(), "/api/jobs/" + std::to_string(id) + "/stream", token);
  EXPECT_EQ(s.status, 200);
}

// Case 7: a job's output name went into Content-Disposition unescaped; a quote in it ended the
// header's value early. Both RFC 6266 forms now carry it exactly.
TEST(ServeHostile, DownloadNamesAreEscapedInTheirHeader) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  json body = json::parse(job_body());
  body["output"] = "a\"b;c d.mkv";
  const int64_t id = submit(*c, token, body.dump());
  ASSERT_EQ(wait_until_finished(*c, token, id)["state"], "done");
  // On a raw socket: httplib's client percent-decodes header values as it reads them.
  const int fd = connect_to(server.port());
  send_all(fd, "GET /api/jobs/" + std::to_string(id) + "/output HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token + "\r\n\r\n");
  const std::string answer = read_for(fd, 3000);
  close(fd);
  ASSERT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer.substr(0, 300);
  const std::string line = "\r\nContent-Disposition: ";
  const size_t at = answer.find(line);
  ASSERT_NE(at, std::string::npos) << answer.substr(0, 300);
  EXPECT_EQ(answer.substr(at + line.size(), answer.find("\r\n", at + 2) - at - line.size()),
            "attachment; filename=\"a\\\"b;c d.mkv\"; filename*=UTF-8''a%22b%3Bc%20d.mkv");
}

// Case 6: a preview ran the whole pipeline in a request thread with no size limit: 16384x16384
// frames (3.2 GB each) and a 500 carrying libtorch's backtrace. Each stage's frame is now held to
// the preview limit before anything is decoded, and previews run on their own thread. (w= and h=
// over 8192 are refused before that by the server's pipeline policy: server_policy_test.cpp.)
TEST(ServeHostile, PreviewsAreCappedInSizeAndSayWhy) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const int64_t before = rss_kib(server.pid());
  auto big = c->Post("/api/preview", bearer(token), json{{"input", "clips/cfr.mkv"}, {"pipeline", "resize:w=8192:h=8192,resize:w=64:h=64"}}.dump(),
                     "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 400) << big->body;
  const std::string why = json::parse(big->body)["error"];
  EXPECT_NE(why.find("8192x8192"), std::string::npos) << why;
  EXPECT_NE(why.find("previews are limited to"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << "one line: " << why;
  EXPECT_LT(rss_kib(server.pid()) - before, 256 * 1024) << "no frame of that size was made";
  auto small = c->Post("/api/preview", bearer(token), json{{"input", "clips/cfr.mkv"}, {"pipeline", "resize:scale=0.5"}}.dump(), "application/json");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
  EXPECT_EQ(small->get_header_value("Content-Type"), "image/png");
}

}  // namespace
}  // namespace framelift::test
