#include <gtest/gtest.h>

#include <thread>

#include "run/bounded_queue.h"

namespace framelift::pipeline {
namespace {

TEST(BoundedQueue, KeepsOrderAndNeverHoldsMoreThanItsCapacity) {
  BoundedQueue<int> q(3);
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) {
      q.push(i);
      ++pushed;
    }
    q.close();
  });
  int expected = 0;
  while (auto v = q.pop()) {
    // The producer can be at most capacity (+1 in flight) ahead of what was consumed.
    EXPECT_LE(pushed.load() - expected, 4);
    EXPECT_EQ(*v, expected++);
  }
  producer.join();
  EXPECT_EQ(expected, 1000);
}

TEST(BoundedQueue, AbortWakesABlockedProducerAndConsumer) {
  BoundedQueue<int> full(1), empty(1);
  full.push(1);
  bool push_result = true;
  std::optional<int> pop_result = 7;
  std::thread producer([&] { push_result = full.push(2); });
  std::thread consumer([&] { pop_result = empty.pop(); });
  full.abort();
  empty.abort();
  producer.join();
  consumer.join();
  EXPECT_FALSE(push_result);
  EXPECT_FALSE(pop_result.has_value());
}

}  // namespace
}  // namespace framelift::pipeline
