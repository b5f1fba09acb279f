// The program tests/api/early_stops_test.cpp stops: an embedder of libframelift.so running one
// job, in a process of its own so that FRAMELIFT_CRASH_AT can kill it.
//
//   api_stop_child start INPUT OUTPUT JOB_DIR    framelift::run() as a job, cancelled on SIGTERM
//   api_stop_child resume INPUT OUTPUT JOB_DIR   Job::open(JOB_DIR).work() then assemble(), or
//                                                run() again when the stop left no job there
//
// A library caller's stop is its cancel callback (framelift/run.h), so this program's SIGTERM
// handler turns the signal into a cancel. The handler runs on the thread that raised it at a
// crash point (FRAMELIFT_STOP_AT) and holds that thread there until the run's watcher has taken
// the cancel (it asks four times a second), so the run stops at that point, not some frames later.
// Exit status: 0 done, else the CLI's code for the error's kind (130 Interrupted), the message on
// stderr.
#include <framelift/framelift.h>

#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

namespace {

std::atomic<bool> g_stop_wanted{false};
// How often the run asked for its cancel since the stop was wanted: after the second ask, the
// first answer (true) has reached the run's flag.
std::atomic<int> g_asked_since{0};

void on_sigterm(int) {
  g_stop_wanted.store(true);
  for (int i = 0; i < 400 && g_asked_since.load() < 2; ++i) {
    timespec ten_ms{0, 10'000'000};
    nanosleep(&ten_ms, nullptr);
  }
}

bool cancel() {
  if (!g_stop_wanted.load()) return false;
  ++g_asked_since;
  return true;
}

framelift::RunRequest request(const char* input, const char* output, const char* job_dir) {
  framelift::RunRequest r;
  r.input = input;
  r.output = output;
  r.job_dir = job_dir;
  r.pipeline = "resize:scale=2";  // tests/support/early_stops.h
  r.codec = "ffv1";
  r.segment_frames = 4;
  return r;
}

int start(const framelift::RunRequest& r) {
  struct sigaction sa {};
  sa.sa_handler = on_sigterm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  framelift::run(r, {}, cancel);
  std::printf("finished without a stop\n");
  return 0;
}

int resume(const framelift::RunRequest& r) {
  if (!std::filesystem::exists(std::filesystem::path(r.job_dir) / "job.json")) {
    std::printf("no job left; running it again\n");
    framelift::run(r);
    return 0;
  }
  const framelift::JobStatus before = framelift::Job::open(r.job_dir).status();
  std::printf("resuming: %d of %d segment(s) finished\n", before.finished, before.segments);
  framelift::Job::open(r.job_dir).work();
  framelift::Job::open(r.job_dir).assemble();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 || (std::strcmp(argv[1], "start") != 0 && std::strcmp(argv[1], "resume") != 0)) {
    std::fprintf(stderr, "usage: api_stop_child start|resume INPUT OUTPUT JOB_DIR\n");
    return 2;
  }
  const framelift::RunRequest r = request(argv[2], argv[3], argv[4]);
  try {
    return std::strcmp(argv[1], "start") == 0 ? start(r) : resume(r);
  } catch (const framelift::Error& e) {
    std::fprintf(stderr, "api_stop_child: %s\n", e.what());
    return framelift::exit_code(e.kind());
  }
}
