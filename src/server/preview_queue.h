#pragma once
// Where previews run: one thread of their own, one preview at a time, never in a request thread
// (a preview runs a whole pipeline on a frame; in request threads a few users could have taken
// every thread and as much memory as the pipelines wanted). A user has at most one preview
// waiting or running, and at most `max_waiting` wait in all; more are refused at once.
//
// Thread-safety: submit() from any thread.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace framelift::server {

class PreviewQueue {
 public:
  explicit PreviewQueue(int max_waiting = 8);
  ~PreviewQueue();  // finishes the running preview, drops the waiting ones (their futures throw)
  PreviewQueue(const PreviewQueue&) = delete;
  PreviewQueue& operator=(const PreviewQueue&) = delete;

  // The future of `work` run on the preview thread (it carries what `work` throws), or nullopt
  // when `user` has one already or the queue is full.
  std::optional<std::future<void>> submit(int64_t user, std::function<void()> work);

 private:
  struct Task {
    int64_t user;
    std::function<void()> work;
    std::promise<void> done;
  };
  void loop();

  const int max_waiting_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> waiting_;
  std::set<int64_t> users_;  // waiting or running
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace framelift::server
