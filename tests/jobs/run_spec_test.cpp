// One serialisation for what a run makes (jobs/run_spec.h): each field changed from its default
// survives job.json's round trip, and a damaged job.json is one line naming the file and the key.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "jobs/job_spec.h"
#include "util/error.h"

namespace framelift::jobs {
namespace {

struct Change {
  std::string field;
  std::function<void(RunSpec&)> apply;
};

// Every field of RunSpec, each set to something other than its default. A field added to RunSpec
// without a line here fails RunSpec.EveryFieldIsCovered through the struct's size.
const std::vector<Change>& changes() {
  static const std::vector<Change> all = {
      {"input", [](RunSpec& s) { s.input = "/media/in.mkv"; }},
      {"output", [](RunSpec& s) { s.output = "/media/out.mkv"; }},
      {"container", [](RunSpec& s) { s.container = "matroska"; }},
      {"pipeline", [](RunSpec& s) { s.pipeline = "resize:scale=2,interpolate:factor=2"; }},
      {"stage_defaults", [](RunSpec& s) { s.stage_defaults = {{"tile", "256"}, {"precision", "bf16"}}; }},
      {"encoder.codec", [](RunSpec& s) { s.encoder.codec = "libx265"; }},
      {"encoder.crf", [](RunSpec& s) { s.encoder.crf = 21.5; }},
      {"encoder.preset", [](RunSpec& s) { s.encoder.preset = "slow"; }},
      {"encoder.pix_fmt", [](RunSpec& s) { s.encoder.pix_fmt = "yuv420p10le"; }},
      {"encoder.options", [](RunSpec& s) { s.encoder.options = {{"x265-params", "aq-mode=3"}}; }},
      {"encoder.threads", [](RunSpec& s) { s.encoder.threads = 3; }},
      {"decoder.hwaccel", [](RunSpec& s) { s.decoder.hwaccel = "cuda"; }},
      {"decoder.on_error", [](RunSpec& s) { s.decoder.on_error = media::DecodeErrorPolicy::Fail; }},
      {"decoder.threads", [](RunSpec& s) { s.decoder.threads = 2; }},
      {"max_frames", [](RunSpec& s) { s.max_frames = 120; }},
      {"color_conversion", [](RunSpec& s) { s.color_conversion = media::ColorConversion::Tensor; }},
      {"queue_depth", [](RunSpec& s) { s.queue_depth = 3; }},
  };
  return all;
}

JobSpec round_trip(const JobSpec& s) { return spec_from_json(nlohmann::json::parse(to_json(s).dump()), "job.json"); }

TEST(RunSpec, EachChangedFieldSurvivesTheRoundTrip) {
  for (const Change& c : changes()) {
    JobSpec s;
    s.framelift_version = "0.1.0";
    s.input_fingerprint = "size=1";
    s.input = "in.mkv";
    s.output = "out.mkv";
    c.apply(s);
    ASSERT_FALSE(static_cast<const RunSpec&>(s) == RunSpec{}) << c.field << ": the change changes nothing";
    const JobSpec back = round_trip(s);
    EXPECT_TRUE(static_cast<const RunSpec&>(back) == static_cast<const RunSpec&>(s)) << c.field << " was lost";
  }
}

TEST(RunSpec, EveryFieldIsCovered) {
  // Counted by hand: 9 top-level fields, 6 encoder and 3 decoder ones; the size ties the count to
  // the struct, so a new field fails here until it has a line in changes().
  EXPECT_EQ(changes().size(), 17u);
  EXPECT_EQ(sizeof(RunSpec), sizeof(std::string) * 3 + sizeof(std::filesystem::path) +
                                 sizeof(std::map<std::string, std::string>) + sizeof(media::EncoderSettings) +
                                 sizeof(media::DecoderOptions) + sizeof(int64_t) * 2 + sizeof(int64_t));
}

TEST(RunSpec, DamagedJobJsonNamesTheFileAndTheKey) {
  JobSpec s;
  s.framelift_version = "0.1.0";
  s.input_fingerprint = "size=1";
  s.input = "in.mkv";
  s.output = "out.mkv";
  const nlohmann::json good = to_json(s);
  struct Damage {
    std::string key;
    nlohmann::json value;  // null: the key is removed
    std::string mentions;
  };
  for (const Damage& d : {Damage{"input", nullptr, "no 'input'"}, Damage{"encoder", nullptr, "no 'encoder'"},
                          Damage{"framelift_version", nullptr, "no 'framelift_version'"},
                          Damage{"max_frames", "many", "'max_frames' has the wrong type"},
                          Damage{"color_conversion", "gpu", "color_conversion 'gpu'"},
                          Damage{"queue_depth", 0, "queue_depth 0"},
                          Damage{"segment_frames", "x", "'segment_frames' has the wrong type"}}) {
    nlohmann::json j = good;
    if (d.value.is_null()) j.erase(d.key);
    else j[d.key] = d.value;
    try {
      spec_from_json(j, "/jobs/a/job.json");
      ADD_FAILURE() << d.key << ": damage accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
      EXPECT_NE(std::string(e.what()).find("/jobs/a/job.json: damaged"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(d.mentions), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace framelift::jobs
