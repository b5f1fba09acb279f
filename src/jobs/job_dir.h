#pragma once
// The job folder (--job-dir, default "<output>.framelift-job" next to the output):
//   job.json                 the spec (job_spec.h)
//   plan.json                the segments (segment_plan.h)
//   segments/NNNNNN.mkv      finished segments, video only, under their final names
//   journal/NNNNNN.json      one record per finished segment (journal.h)
//   claims/NNNNNN.lock       which worker is processing which segment (claims.h)
//   tmp/                     segments being written; never read back
//   assembled.json           which file the assembly made (device, inode): later workers leave it be
// Every file that is read back is written atomically, so a crash at any instant leaves a folder
// that the next run can trust.
#include <filesystem>
#include <string>

namespace framelift::jobs {

// The claim that lets one of several workers that finish together assemble the output.
constexpr int kAssembleClaim = -1;

class JobDir {
 public:
  explicit JobDir(std::filesystem::path root);

  // "<output>.framelift-job" in the output's folder.
  static std::filesystem::path default_for(const std::filesystem::path& output);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path spec_file() const { return root_ / "job.json"; }
  std::filesystem::path plan_file() const { return root_ / "plan.json"; }
  std::filesystem::path segment_file(int index) const;
  std::filesystem::path record_file(int index) const;
  std::filesystem::path claim_file(int index) const;
  std::filesystem::path temp_dir() const { return root_ / "tmp"; }
  std::filesystem::path assembled_file() const { return root_ / "assembled.json"; }
  std::filesystem::path journal_dir() const { return root_ / "journal"; }
  std::filesystem::path claims_dir() const { return root_ / "claims"; }

  bool exists() const;
  // Creates the folders. Throws Error(Output) naming the folder.
  void create() const;

 private:
  std::filesystem::path root_;
};

// "000012": file names sort in segment order.
std::string segment_name(int index);

}  // namespace framelift::jobs
