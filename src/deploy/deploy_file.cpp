#include "deploy/deploy_file.h"

#include "util/error.h"
#include "util/fs.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::deploy {

void write_deploy_files(const std::vector<DeployFile>& files) {
  for (const DeployFile& file : files) {
    std::error_code ec;
    fs::create_directories(file.path.parent_path(), ec);
    if (ec) throw Error(ErrorKind::Output, str(file.path.parent_path().string(), ": cannot create folder (", ec.message(), ")"));
    write_file_atomic(file.path, file.content);
    if (!file.executable) continue;
    fs::permissions(file.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec, ec);
    if (ec) throw Error(ErrorKind::Output, str(file.path.string(), ": cannot make executable (", ec.message(), ")"));
  }
}

}  // namespace framelift::deploy
