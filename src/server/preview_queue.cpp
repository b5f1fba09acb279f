#include "server/preview_queue.h"

#include <exception>

namespace framelift::server {

PreviewQueue::PreviewQueue(int max_waiting) : max_waiting_(max_waiting), thread_([this] { loop(); }) {}

PreviewQueue::~PreviewQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    waiting_.clear();  // broken promises: their waiters see an error, not a hang
  }
  wake_.notify_all();
  thread_.join();
}

std::optional<std::future<void>> PreviewQueue::submit(int64_t user, std::function<void()> work) {
  std::lock_guard lock(mutex_);
  if (stopping_ || users_.count(user) || int(waiting_.size()) >= max_waiting_) return std::nullopt;
  Task t{user, std::move(work), {}};
  std::future<void> done = t.done.get_future();
  users_.insert(user);
  waiting_.push_back(std::move(t));
  wake_.notify_one();
  return done;
}

void PreviewQueue::loop() {
  for (;;) {
    Task t;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      t = std::move(waiting_.front());
      waiting_.pop_front();
    }
    std::exception_ptr failure;
    try {
      t.work();
    } catch (...) {
      failure = std::current_exception();
    }
    // The user's slot is free before the waiter hears back: a client that sends its next preview
    // as soon as this one answers must not find its own finished one still counted (429).
    {
      std::lock_guard lock(mutex_);
      users_.erase(t.user);
    }
    if (failure) t.done.set_exception(failure);
    else t.done.set_value();
  }
}

}  // namespace framelift::server
