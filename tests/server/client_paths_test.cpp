// server/client_paths.h on its own: what a client is shown of the server's paths in error text.
#include <gtest/gtest.h>

#include "server/client_paths.h"

namespace framelift::server {
namespace {

TEST(ClientPaths, KnownPathsShowAsTheClientNamesThemAndOthersAreHidden) {
  ClientPaths p;
  p.add("/srv/media", "");
  p.add("/srv/data/uploads/abc/holiday.mkv", "holiday.mkv");
  EXPECT_EQ(p.rewrite("/srv/media/clips/a.mkv: not media"), "clips/a.mkv: not media");
  EXPECT_EQ(p.rewrite("/srv/data/uploads/abc/holiday.mkv: Invalid data"), "holiday.mkv: Invalid data");
  EXPECT_EQ(p.rewrite("cannot open '/srv/data/server.db' (EACCES)"), "cannot open '<server path>' (EACCES)");
  EXPECT_EQ(p.rewrite("/srv/media2/x.mkv: gone"), "<server path>: gone") << "a root's name is not a prefix of another folder";
  EXPECT_EQ(p.rewrite("model=/etc/passwd is refused"), "model=<server path> is refused");
  EXPECT_EQ(p.rewrite("fps 60000/1001, scale 1/2, clips/a.mkv"), "fps 60000/1001, scale 1/2, clips/a.mkv") << "not paths";
}

}  // namespace
}  // namespace framelift::server
