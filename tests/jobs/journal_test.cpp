// The journal counts a segment only with its file complete: a truncated or altered segment is
// redone; records and spec survive their JSON form; a changed input is recognised.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "jobs/fingerprint.h"
#include "jobs/job_spec.h"
#include "jobs/journal.h"
#include "support/test_paths.h"

namespace fs = std::filesystem;

namespace framelift::jobs {
namespace {

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

TEST(Journal, CommittedSegmentsAreFoundAndDamagedOnesDropped) {
  JobDir dir(test::temp_dir("journal") / "job");
  dir.create();
  Journal journal(dir);
  for (int i = 0; i < 3; ++i) {
    const fs::path tmp = dir.temp_dir() / ("s" + std::to_string(i));
    write(tmp, "segment " + std::to_string(i) + " payload");
    SegmentRecord r;
    r.index = i;
    r.frames_in = 10 + i;
    r.frames_out = 20 + i;
    r.time_base_num = 1;
    r.time_base_den = 25;
    r.packets = {{0, -2, 1}, {1, -1, 1}};
    journal.commit(r, tmp);
    EXPECT_FALSE(fs::exists(tmp));
  }
  auto done = journal.finished(true);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done.at(2).frames_out, 22);
  EXPECT_EQ(done.at(1).packets.at(1)[1], -1);
  EXPECT_EQ(done.at(0).sha256.size(), 64u);

  fs::resize_file(dir.segment_file(0), 4);                      // truncated
  write(dir.segment_file(1), "segment 1 pAyload");              // same size, other bytes
  write(dir.record_file(2).string() + ".junk", "not a record");  // stray files are ignored
  EXPECT_EQ(journal.finished(false).size(), 2u) << "size check only: segment 1 still looks complete";
  auto verified = journal.finished(true);
  EXPECT_EQ(verified.size(), 1u);
  EXPECT_TRUE(verified.count(2));
  // The damaged segment lost its record: the workers' size-only check redoes it too.
  EXPECT_EQ(journal.finished(false).size(), 1u) << "a segment that failed its checksum was reused";
  EXPECT_FALSE(fs::exists(dir.record_file(1)));
}

TEST(Journal, DamagedRecordsCountAsAbsent) {
  JobDir dir(test::temp_dir("journal-damage") / "job");
  dir.create();
  Journal journal(dir);
  for (int i = 0; i < 4; ++i) {
    const fs::path tmp = dir.temp_dir() / ("s" + std::to_string(i));
    write(tmp, "payload " + std::to_string(i));
    SegmentRecord r;
    r.index = i;
    r.frames_in = r.frames_out = 3;
    r.time_base_num = 1;
    r.time_base_den = 25;
    r.packets = {{0, -1, 1}, {2, 0, 1}, {1, 1, 1}};
    journal.commit(r, tmp);
  }
  auto edit = [&](int index, const std::function<void(nlohmann::json&)>& change, bool keep_seal) {
    std::ifstream in(dir.record_file(index));
    nlohmann::json j = nlohmann::json::parse(in);
    change(j);
    if (!keep_seal) j.erase("seal");  // as a record written before seals existed
    write(dir.record_file(index), j.dump());
  };
  edit(0, [](nlohmann::json& j) { j["packets"][1][0] = 900000; }, true);          // a jumping timestamp: seal broken
  edit(1, [](nlohmann::json& j) { j["time_base"] = {1, 0}; }, false);             // unsealed, time base 1/0
  edit(2, [](nlohmann::json& j) { j["packets"][2][1] = -5; }, false);             // unsealed, dts going back
  edit(3, [](nlohmann::json&) {}, false);                                         // unsealed and sound
  const auto done = journal.finished(false);
  EXPECT_EQ(done.size(), 1u);
  EXPECT_TRUE(done.count(3));
}

TEST(Journal, ARecordWithoutItsSegmentDoesNotCount) {
  JobDir dir(test::temp_dir("journal-orphan") / "job");
  dir.create();
  Journal journal(dir);
  const fs::path tmp = dir.temp_dir() / "s";
  write(tmp, "x");
  SegmentRecord r;
  r.index = 4;
  journal.commit(r, tmp);
  fs::remove(dir.segment_file(4));
  EXPECT_TRUE(journal.finished(false).empty());
}

TEST(JobSpec, RoundTripAndDifferences) {
  JobSpec a;
  a.framelift_version = "0.3.0";
  a.input = "in.mkv";
  a.input_fingerprint = "size=1 head+tail-sha256=ab";
  a.output = "/x/out.mkv";
  a.pipeline = "resize:scale=2";
  a.stage_defaults = {{"device", "cpu"}, {"tile", "0"}};
  a.encoder.codec = "libx264";
  a.encoder.crf = 18;
  a.encoder.options = {{"tune", "film"}};
  a.segment_frames = 48;
  JobSpec b = spec_from_json(nlohmann::json::parse(to_json(a).dump()));
  EXPECT_EQ(spec_difference(a, b), "");
  EXPECT_EQ(b.encoder.crf, 18);
  b.output = "/elsewhere/out.mkv";
  b.stage_defaults["device"] = "cuda:1";
  EXPECT_EQ(spec_difference(a, b), "") << "moving the output or the device keeps the segments valid";
  b.stage_defaults["tile"] = "256";
  EXPECT_NE(spec_difference(a, b), "");
  JobSpec c = a;
  c.input_fingerprint = "size=1 head+tail-sha256=cd";
  EXPECT_NE(spec_difference(a, c).find("input changed"), std::string::npos);
  JobSpec d = a;
  d.encoder.crf = 20;
  EXPECT_NE(spec_difference(a, d).find("encoder"), std::string::npos);
}

TEST(Fingerprint, SameBytesSameFingerprintOneByteChangedDiffers) {
  const fs::path dir = test::temp_dir("fingerprint");
  std::string big(9u << 20, 'a');  // larger than head + tail
  write(dir / "a", big);
  write(dir / "b", big);
  EXPECT_EQ(fingerprint_input((dir / "a").string()), fingerprint_input((dir / "b").string()));
  big[big.size() - 10] = 'b';  // in the tail
  write(dir / "b", big);
  EXPECT_NE(fingerprint_input((dir / "a").string()), fingerprint_input((dir / "b").string()));
  big[big.size() - 10] = 'a';
  big[5] = 'c';  // in the head
  write(dir / "b", big);
  EXPECT_NE(fingerprint_input((dir / "a").string()), fingerprint_input((dir / "b").string()));
  EXPECT_THROW(fingerprint_input((dir / "missing").string()), std::exception);
}

}  // namespace
}  // namespace framelift::jobs
