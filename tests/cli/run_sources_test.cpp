// Inputs beyond local files, and hardware decoding where the device is absent.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

TEST(RunSources, HardwareDecodeFallsBackToCpuWithAMessage) {
  auto in = media("cfr_8bit.mkv");
  auto out = temp_dir("hw") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --hwaccel cuda --preset ultrafast");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // On a machine with a CUDA device the message is absent and the frames come from the GPU.
  if (r.output.find("decoding with hardware acceleration") == std::string::npos) {
    EXPECT_NE(r.output.find("hardware decoding 'cuda' is not available"), std::string::npos) << r.output;
  }
  EXPECT_EQ(count_frames(out), 50);
}

// A throwaway HTTP server on loopback (python3's http.server) serving the test media folder.
class HttpServer {
 public:
  explicit HttpServer(const std::filesystem::path& root) {
    port_ = 20000 + getpid() % 20000;
    pid_ = fork();
    if (pid_ == 0) {
      std::string port = std::to_string(port_);
      execlp("python3", "python3", "-m", "http.server", port.c_str(), "--bind", "127.0.0.1", "--directory",
             root.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Wait until it answers (bounded).
    for (int i = 0; i < 50; ++i) {
      if (run_command("python3 -c \"import urllib.request;urllib.request.urlopen('" + url("") + "')\"") == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~HttpServer() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::string url(const std::string& file) const { return "http://127.0.0.1:" + std::to_string(port_) + "/" + file; }

 private:
  int port_;
  pid_t pid_;
};

TEST(RunSources, HttpInputIsReadLikeAFile) {
  HttpServer server(media_dir());
  auto out = temp_dir("http") / "out.mkv";
  auto r = framelift("run -i " + server.url("cfr_8bit.mkv") + " -o " + shell_quote(out) + " --preset ultrafast");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_frames(out), 50);
  auto missing = framelift("probe -i " + server.url("missing.mkv"));
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_NE(missing.output.find("missing.mkv"), std::string::npos) << missing.output;
}

TEST(RunSources, ImageSequenceInputByPattern) {
  auto dir = temp_dir("sequence");
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=64x48:r=5 -frames:v 3 '" +
                        (dir / "%04d.png").string() + "'"),
            0);
  auto out = dir / "out.mkv";
  auto r = framelift("run -i " + shell_quote(dir / "%04d.png") + " -o " + shell_quote(out) + " -c ffv1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_frames(out), 3);
  // A pattern that matches nothing is an input error naming it, not a crash.
  auto missing = framelift("run -i " + shell_quote(dir / "x%04d.png") + " -o " + shell_quote(dir / "m.mkv"));
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_NE(missing.output.find("x%04d.png"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace framelift::test
