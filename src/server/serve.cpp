#include "server/serve.h"

#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "server/auth.h"
#include "server/data_lock.h"
#include "server/disk_space.h"
#include "server/guarded_server.h"
#include "server/housekeeping.h"
#include "server/http_api.h"
#include "server/media_roots.h"
#include "server/server_policy.h"
#include "server/preview_queue.h"
#include "server/store.h"
#include "server/uploads.h"
#include "server/workers.h"
#include "util/error.h"
#include "util/log.h"
#include "util/stop.h"
#include "util/str.h"

namespace framelift::server {
namespace fs = std::filesystem;
namespace {

struct HostPort {
  std::string host;
  int port = 0;
};

HostPort parse_listen(const std::string& listen) {
  auto fail = [&] { return Error(ErrorKind::Usage, str("--listen ", listen, ": give HOST:PORT (127.0.0.1:8642, [::1]:8642)")); };
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) throw fail();
  HostPort hp;
  hp.host = listen.substr(0, colon);
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') hp.host = hp.host.substr(1, hp.host.size() - 2);
  const std::string port = listen.substr(colon + 1);
  if (hp.host.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) throw fail();
  hp.port = std::stoi(port);
  if (hp.port > 65535) throw fail();
  return hp;
}

// The gate has to hold every waiting connection's descriptor: as many as the hard limit allows.
void raise_descriptor_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

std::unique_ptr<GuardedServer> make_server(const ServeOptions& o, const HostPort& hp) {
  const bool tls = !o.tls_cert.empty() || !o.tls_key.empty();
  if (!tls && !is_loopback(hp.host) && !o.insecure_http)
    throw Error(ErrorKind::Usage, str("--listen ", o.listen, ": not a loopback address; serve it over HTTPS (--tls-cert, --tls-key), ",
                                      "or reach a loopback server through `ssh -L 8642:localhost:8642 HOST`; --insecure-http ",
                                      "sends tokens in the clear"));
  return std::make_unique<GuardedServer>(o.http, o.tls_cert, o.tls_key);
}

}  // namespace

bool is_loopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

void serve(const ServeOptions& o) {
  const HostPort hp = parse_listen(o.listen);
  if (o.data.empty()) throw Error(ErrorKind::Usage, "--data DIR is required: the server keeps its queue and outputs there");
  if (o.media.empty()) throw Error(ErrorKind::Usage, "--media ROOT is required: the folders inputs are read from");
  const MediaRoots media(o.media);
  std::unique_ptr<GuardedServer> http = make_server(o, hp);
  raise_descriptor_limit();
  std::error_code ec;
  fs::create_directories(o.data, ec);
  if (ec) throw Error(ErrorKind::Output, str(o.data.string(), ": cannot create the data folder: ", ec.message()));

  // Before the queue is opened: a second server on this folder would requeue and run the first
  // one's running jobs beside it.
  const DataLock lock(o.data);
  Store store(o.data, o.busy_timeout_ms);
  if (const int n = store.requeue_interrupted()) log::info("serve: ", n, " job(s) were running when the server stopped; they resume");
  if (const int n = remove_done_job_folders(store, o.data)) log::info("serve: removed the job folders of ", n, " finished job(s)");
  const DiskGuard disk(o.data, o.min_free_bytes);
  Workers workers(store, o.data, o.devices, disk, server_policy(media));
  Authenticator auth(store);
  Uploads uploads(store, o.data, disk);
  // Long responses may hold at most half the request threads, so requests always find one.
  LongResponses long_responses(o.http.max_long_per_user, std::max(1, o.http.threads / 2));
  PreviewQueue previews;
  ApiContext context{store,
                     workers,
                     media,
                     auth,
                     o.data,
                     o.max_active_jobs_per_user,
                     uploads,
                     o.max_upload_bytes,
                     o.max_request_bytes,
                     o.price_per_hour,
                     o.model_downloads,
                     !o.tls_cert.empty(),
                     long_responses,
                     o.http.max_long_per_user,
                     previews,
                     o.max_preview_pixels,
                     disk,
                     o.max_upload_bytes_per_user};
  add_api_routes(*http, context);
  // Upload chunks are the largest bodies; JSON routes hold theirs to max_request_bytes.
  http->set_payload_max_length(std::max(o.max_request_bytes, o.max_chunk_bytes));
  http->set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    // The text may name the server's files or carry a libtorch backtrace: the log keeps it.
    log::error("serve: ", req.method, " ", req.path, ": ", what);
    res.status = 500;
    res.set_content(R"j({"error": "the server could not answer this request (its log says why)"})j", "application/json");
  });

  int port = hp.port;
  if (port == 0) port = http->bind_to_any_port(hp.host);
  else if (!http->bind_to_port(hp.host, port)) port = -1;
  if (port < 0) throw Error(ErrorKind::Usage, str("--listen ", o.listen, ": cannot listen there (in use, or not this machine's address)"));
  const bool tls = !o.tls_cert.empty();
  const std::string shown = hp.host.find(':') != std::string::npos ? "[" + hp.host + "]" : hp.host;
  const std::string url = str(tls ? "https://" : "http://", shown, ":", port);
  log::info("serve: listening on ", url, " (data ", o.data.string(), ")");
  if (o.on_listening) o.on_listening(url);

  std::thread listener([&] { http->listen_after_bind(); });
  while (!stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  log::info("serve: stopping (", stop_reason(), "); running jobs go back to the queue");
  context.stopping = true;  // event streams end, so the HTTP threads can
  http->stop();
  listener.join();
  http->close();
  workers.stop();
}

}  // namespace framelift::server
