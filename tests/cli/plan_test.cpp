// `framelift plan` end to end on a real clip: a ranked JSON plan whose recommendation fits its
// card with the 20% margin, a deadline that no card meets is said so, and a self-contained page.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/cli_runner.h"
#include "cli/profile_support.h"
#include "support/torchscript_modules.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

nlohmann::json plan_json(const std::string& extra) {
  auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) +
                     " --pipeline upscale:model=realesrgan-x4plus --json " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output.substr(r.output.find('{')));
}

TEST(PlanCommand, RecommendsAFittingCardAndWritesAPage) {
  const nlohmann::json plan = plan_json("");
  ASSERT_GT(plan["rows"].size(), 10u);
  int recommended = 0;
  for (const auto& row : plan["rows"]) {
    if (!row.value("recommended", false)) continue;
    ++recommended;
    EXPECT_EQ(row["fits"], "yes") << row.dump();
    EXPECT_GE(row["memory_free"].get<double>(), 0.2) << row.dump();
  }
  EXPECT_EQ(recommended, 1);
  EXPECT_NE(plan["recommendation"].get<std::string>().find("Recommended"), std::string::npos);

  const fs::path page = temp_dir("plan") / "plan.html";
  auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) + " --html " + shell_quote(page));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(html.find("<svg"), std::string::npos);
  // Self-contained: nothing fetched (the SVG namespace URI is a name, not a request).
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

// The page as a browser shows it: headless Chromium (installed by setup.sh) takes a screenshot,
// and the chart must be there: the recommended offer's red dot (#d00) and the other offers' green
// ones (#2a6), on a page that is not blank.
TEST(PlanCommand, PageRendersInHeadlessChromium) {
  if (run_command("command -v chromium >/dev/null") != 0) GTEST_SKIP() << "chromium not installed (scripts/setup.sh)";
  const fs::path dir = temp_dir("plan-chromium"), page = dir / "plan.html", shot = dir / "shot.png";
  // A 2 h deadline for a 2-second clip: far beyond every offer, it must not squeeze the chart.
  auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) +
                     " --pipeline upscale:model=realesrgan-x4plus --deadline 2h --html " + shell_quote(page));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string log;
  ASSERT_EQ(run_command("timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,800"
                        " --screenshot=" + shell_quote(shot) + " 'file://" + page.string() + "' 2>&1", &log),
            0) << log;
  std::string raw;
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -i " + shell_quote(shot) + " -f rawvideo -pix_fmt rgb24 -", &raw), 0);
  ASSERT_EQ(raw.size(), 1000u * 800 * 3);
  int red = 0, green = 0, dark = 0;
  for (size_t i = 0; i + 2 < raw.size(); i += 3) {
    const int R = uint8_t(raw[i]), G = uint8_t(raw[i + 1]), B = uint8_t(raw[i + 2]);
    if (R > 200 && G < 30 && B < 30) ++red;
    if (std::abs(R - 0x22) < 16 && std::abs(G - 0xaa) < 16 && std::abs(B - 0x66) < 16) ++green;
    if (R < 80 && G < 80 && B < 80) ++dark;
  }
  std::printf("screenshot: %d red, %d green, %d dark pixels\n", red, green, dark);
  EXPECT_GT(red, 40);    // a 6 px dot (antialiased) and its label
  EXPECT_GT(green, 200); // many 4 px dots
  EXPECT_GT(dark, 5000); // headings, axes, the table's text
}

// `plan` takes every pipeline `run` takes (the README's own among them), reading it with the same
// parser and schemas: denoise levels, filter graphs, deinterlacing, model files. What has no
// cost model is planned and flagged, never refused; what `run` refuses, plan refuses alike.
TEST(PlanCommand, TakesEveryPipelineRunTakes) {
  const std::string aniscale = (npm_package("waifu2x") / "models" / "2x-AniScale.pth").string();
  for (const std::string& pipeline :
       {std::string("denoise:level=3,upscale,interpolate:fps=60"),
        std::string("filter:graph='hqdn3d=4,unsharp',upscale:model=realesr-animevideov3-x2"),
        std::string("deinterlace:mode=field,denoise:level=1,upscale"), "upscale:model=" + aniscale,
        std::string("model:file=inpaint.pt:box=600,40,180,60")}) {
    auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) + " --json --pipeline \"" +
                       pipeline + "\"");
    ASSERT_EQ(r.exit_code, 0) << pipeline << "\n" << r.output;
    const auto plan = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    EXPECT_GT(plan["rows"].size(), 10u) << pipeline;
    const bool unpriced = pipeline.find("filter") != std::string::npos || pipeline.find("deinterlace") != std::string::npos ||
                          pipeline.find("model:") == 0;
    bool flagged = false;
    for (const auto& w : plan["rows"][0]["warnings"]) flagged |= w.get<std::string>().find("needs a profile") != std::string::npos;
    EXPECT_EQ(flagged, unpriced) << pipeline << ": " << plan["rows"][0].dump();
  }
  auto bad = framelift("plan -i " + shell_quote(media("real_megamind.mkv")) + " --pipeline resize:scale=nan");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("stage resize: scale=nan is not allowed"), std::string::npos) << bad.output;
}

// --local is this machine, already up: its time is the frames' alone, no cloud start-up.
TEST(PlanCommand, LocalAddsNoStartupTime) {
  auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) +
                     " --pipeline resize:scale=0.5 --local --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto plan = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  bool found = false;
  for (const auto& row : plan["rows"]) {
    if (row["provider"] != "local") continue;
    found = true;
    const double frames = plan["job"]["out_frames"].get<double>(), fps = row["fps"].get<double>();
    EXPECT_NEAR(row["time_s"].get<double>(), frames / fps + row["transfer_s"].get<double>(), 1e-6) << row.dump();
  }
  EXPECT_TRUE(found) << r.output;
}

nlohmann::json plan_of(const fs::path& input, const std::string& pipeline, const std::string& extra = "") {
  auto r = framelift("--log-level warn plan -i " + shell_quote(input) + " --local --json --pipeline \"" + pipeline + "\" " + extra);
  EXPECT_EQ(r.exit_code, 0) << pipeline << "\n" << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(r.output.substr(r.output.find('{'))) : nlohmann::json::object();
}

const nlohmann::json& local_row(const nlohmann::json& plan) {
  for (const auto& row : plan["rows"])
    if (row["provider"] == "local") return row;
  ADD_FAILURE() << "no local row: " << plan.dump();
  static const nlohmann::json none = nlohmann::json::object();
  return none;
}

// A model file is priced as the network `run` runs for it: an ncnn animevideov3 x2 export is the
// x4 Compact resized down, the same network as the catalog name; a .pth by its detected
// architecture.
TEST(PlanCommand, PricesModelFilesAsTheNetworkRunRuns) {
  if (!have_weights()) GTEST_SKIP() << "npm weights not installed (scripts/setup.sh)";
  const fs::path clip = media("real_megamind.mkv");
  const std::string param = (npm_package("waifu2x") / "real-esrgan/models/realesr-animevideov3-x2.param").string();
  const auto by_file = plan_of(clip, "upscale:model=" + param);
  const auto by_name = plan_of(clip, "upscale:model=realesr-animevideov3-x2");
  ASSERT_TRUE(by_file.contains("job") && by_name.contains("job"));
  const auto& file_stage = by_file["job"]["stages"][0];
  const auto& name_stage = by_name["job"]["stages"][0];
  EXPECT_EQ(file_stage["arch"], "srvgg_compact") << file_stage.dump();
  EXPECT_EQ(file_stage["cost_known"], true) << file_stage.dump();
  EXPECT_EQ(file_stage["scale"], 2) << file_stage.dump();
  EXPECT_DOUBLE_EQ(file_stage["gflops_per_input_megapixel"].get<double>(), name_stage["gflops_per_input_megapixel"].get<double>());
  EXPECT_EQ(by_file["job"]["out_width"], by_name["job"]["out_width"]);
  EXPECT_NEAR(local_row(by_file)["fps"].get<double>(), local_row(by_name)["fps"].get<double>(),
              1e-9 * local_row(by_name)["fps"].get<double>());
  for (const auto& w : local_row(by_file)["warnings"]) EXPECT_EQ(w.get<std::string>().find("unknown"), std::string::npos) << w;

  const auto pth = plan_of(clip, "upscale:model=" + (source_dir() / "tests/data/arch/span-f16-x2.pth").string());
  ASSERT_TRUE(pth.contains("job"));
  EXPECT_EQ(pth["job"]["stages"][0]["arch"], "span") << pth["job"]["stages"][0].dump();
  EXPECT_EQ(pth["job"]["stages"][0]["cost_known"], true);
  EXPECT_GT(pth["job"]["stages"][0]["gflops_per_input_megapixel"].get<double>(), 0);
}

// A stage without a cost model (a TorchScript module) is never free: every row, in text and
// JSON, says its cost is unknown and its figures are bounds.
TEST(PlanCommand, UnknownCostIsMarkedInEveryRow) {
  const std::string pipeline = "upscale:model=realesr-animevideov3-x2,model:file=inpaint.pt:box=600,40,180,60";
  const auto plan = plan_of(media("real_megamind.mkv"), pipeline);
  ASSERT_TRUE(plan.contains("rows"));
  EXPECT_EQ(plan["job"]["stages"][1]["cost_known"], false);
  EXPECT_TRUE(plan["job"]["stages"][1]["gflops_per_input_megapixel"].is_null()) << plan["job"]["stages"][1].dump();
  for (const auto& row : plan["rows"]) {
    EXPECT_EQ(row["cost_known"], false) << row.dump();
    EXPECT_EQ(row["unknown_stages"], nlohmann::json::array({"model (inpaint.pt)"})) << row.dump();
  }
  auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) + " --local --pipeline \"" + pipeline + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("counted as free"), std::string::npos) << r.output;
  // One table line per row, each with the warning and, where the job runs, its bounds marked.
  size_t unknown_lines = 0, bounded = 0;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("cost unknown, left out") == std::string::npos) continue;
    ++unknown_lines;
    bounded += line.find(" <") != std::string::npos && line.find(" >") != std::string::npos;
  }
  size_t running = 0;
  for (const auto& row : plan["rows"]) running += row["fits"] != "no";
  EXPECT_EQ(unknown_lines, plan["rows"].size()) << r.output;
  EXPECT_EQ(bounded, running) << r.output;
}

// A manifest `framelift profile` measured on the ncnn file's pipeline calibrates the plan of that
// same pipeline: the planned stage time on the measured device is the measured one.
TEST(PlanCommand, ProfileOfAnNcnnFileCalibratesItsPlan) {
  if (!have_weights()) GTEST_SKIP() << "npm weights not installed (scripts/setup.sh)";
  const fs::path dir = temp_dir("plan-calibrated");
  const fs::path clip = footage(dir, 64, 48, 8);
  const std::string pipeline =
      "upscale:model=" + (npm_package("waifu2x") / "real-esrgan/models/realesr-animevideov3-x2.param").string();
  const nlohmann::json m = profile(clip, pipeline, "--frames 3 --stretches 1 --warmup 1", dir / "m.json");
  ASSERT_EQ(m["runs"].size(), 1u) << m.dump();
  EXPECT_EQ(m["runs"][0]["arch"], "srvgg_compact");
  const auto plan = plan_of(clip, pipeline, "--calibration " + shell_quote(dir / "m.json"));
  ASSERT_TRUE(plan.contains("rows"));
  const auto& row = local_row(plan);
  ASSERT_EQ(row["stages"].size(), 1u) << row.dump();
  const double measured = m["runs"][0]["seconds"].get<double>() * m["runs"][0]["calls"].get<double>() /
                          m["sample"]["frames_in"].get<double>();
  EXPECT_NEAR(row["stages"][0]["seconds_per_frame"].get<double>(), measured, 0.02 * measured) << row.dump() << "\n" << m.dump();
}

// A TorchScript stage has no cost model; a manifest measured on the same pipeline prices it on the
// measured device (here this machine's CPU) with the measured time, and nowhere else.
TEST(PlanCommand, ProfileOfATorchScriptPipelinePricesItWhereMeasured) {
  const fs::path dir = temp_dir("plan-torchscript");
  const fs::path clip = footage(dir, 64, 48, 8);
  const std::string pipeline = "model:file=" + save_torchscript(dir / "matrix.pt", modules::kColorMatrix).string();
  const nlohmann::json m = profile(clip, pipeline, "--frames 3 --stretches 1 --warmup 1", dir / "m.json");
  ASSERT_EQ(m["stages"].size(), 1u) << m.dump();
  const auto& st = m["stages"][0];
  const double measured = (st["own_s"].get<double>() + st["upload_s"].get<double>() + st["inference_s"].get<double>() +
                           st["download_s"].get<double>()) / m["sample"]["frames_in"].get<double>();
  ASSERT_GT(measured, 0) << m.dump();
  EXPECT_EQ(local_row(plan_of(clip, pipeline))["cost_known"], false);

  const auto plan = plan_of(clip, pipeline, "--calibration " + shell_quote(dir / "m.json"));
  ASSERT_TRUE(plan.contains("rows"));
  const auto& row = local_row(plan);
  EXPECT_EQ(row["cost_known"], true) << row.dump();
  ASSERT_EQ(row["stages"].size(), 1u) << row.dump();
  EXPECT_NEAR(row["stages"][0]["seconds_per_frame"].get<double>(), measured, 1e-9 + 1e-6 * measured) << row.dump();
  for (const auto& r : plan["rows"])
    if (r["provider"] != "local") {
      EXPECT_EQ(r["cost_known"], false) << r.dump();
    }
}

TEST(PlanCommand, MissingInputIsAClearError) {
  auto r = framelift("plan -i " + shell_quote(temp_dir("plan-missing") / "nope.mkv"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("nope.mkv"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace framelift::test
