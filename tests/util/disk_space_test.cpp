// Free space as statvfs gives it, on a real 2 MiB tmpfs; and the words a full disk's error uses,
// which the job recognises to add how much more it needs.
#include "util/disk_space.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "support/small_disk.h"
#include "support/test_paths.h"

namespace fs = std::filesystem;

namespace framelift {
namespace {

TEST(DiskSpace, FreeBytesOfASmallFileSystemAndOfAPathNotMadeYet) {
  test::SmallDisk disk("free", 2 << 20);
  if (!disk.available()) GTEST_SKIP() << disk.why();
  EXPECT_EQ(free_disk_bytes(disk.dir()), 2 << 20);
  // An output's folder before the run makes it: asked through the nearest folder that exists.
  EXPECT_EQ(free_disk_bytes(disk.dir() / "not" / "made" / "out.mkv"), 2 << 20);
  { std::ofstream(disk.dir() / "half.bin", std::ios::binary) << std::string(1 << 20, 'x'); }
  EXPECT_EQ(free_disk_bytes(disk.dir()), 1 << 20);
  EXPECT_TRUE(same_file_system(disk.dir() / "half.bin", disk.dir() / "later.mkv"));
  EXPECT_FALSE(same_file_system(disk.dir(), test::temp_dir("elsewhere")));
}

TEST(DiskSpace, AFullDiskSaysSoAndOtherErrorsDoNot) {
  EXPECT_TRUE(says_disk_full("out.mkv: write failed (" + write_error_text(ENOSPC) + ")"));
  EXPECT_TRUE(says_disk_full(write_error_text(EDQUOT)));
  EXPECT_NE(write_error_text(ENOSPC).find("no space left on device"), std::string::npos);
  EXPECT_FALSE(says_disk_full(write_error_text(EIO)));
  EXPECT_FALSE(says_disk_full(write_error_text(EFBIG)));  // a file size limit: more disk does not help
  EXPECT_EQ(human_bytes(830e3), "830 kB");
  EXPECT_EQ(human_bytes(12.44e6), "12.4 MB");
  EXPECT_EQ(human_bytes(3.214e9), "3.21 GB");
}

}  // namespace
}  // namespace framelift
