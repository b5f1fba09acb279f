// log::QuietScope drops this thread's info and debug messages while it lives, keeps warnings and
// errors, and leaves other threads and the level as they were.
#include <gtest/gtest.h>

#include <thread>

#include "util/log.h"

namespace framelift::log {
namespace {

TEST(LogQuietScope, DropsThisThreadsInfoOnlyWhileAlive) {
  const Level saved = level();
  set_level(Level::Debug);
  EXPECT_TRUE(enabled(Level::Info));
  {
    QuietScope quiet;
    EXPECT_FALSE(enabled(Level::Info));
    EXPECT_FALSE(enabled(Level::Debug));
    EXPECT_TRUE(enabled(Level::Warn));
    EXPECT_TRUE(enabled(Level::Error));
    bool other_thread_info = false;
    std::thread([&] { other_thread_info = enabled(Level::Info); }).join();
    EXPECT_TRUE(other_thread_info) << "another thread's messages are not the scope's";
    {
      QuietScope nested;
      EXPECT_FALSE(enabled(Level::Info));
    }
    EXPECT_FALSE(enabled(Level::Info)) << "the outer scope still holds";
  }
  EXPECT_TRUE(enabled(Level::Info));
  EXPECT_EQ(level(), Level::Debug);
  set_level(saved);
}

}  // namespace
}  // namespace framelift::log
