#include "run/batch_runner.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::pipeline {
namespace {

bool is_list_file(const fs::path& p) { return p.extension() == ".txt" || p.extension() == ".list"; }

// Extensions of the videos a folder batch takes; anything else in the folder (notes, subtitles,
// our own outputs' job folders) is left alone.
bool looks_like_video(const fs::path& p) {
  static const std::set<std::string> kVideo = {".mkv", ".mp4", ".mov", ".avi", ".webm", ".m4v", ".ts", ".mts",
                                               ".m2ts", ".mpg", ".mpeg", ".wmv", ".flv", ".vob", ".ogv", ".y4m"};
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return kVideo.count(ext) > 0;
}

}  // namespace

bool is_batch_input(const std::string& input) {
  std::error_code ec;
  return fs::is_directory(input, ec) || (is_list_file(input) && fs::is_regular_file(input, ec));
}

std::vector<std::string> batch_inputs(const std::string& input) {
  std::vector<std::string> inputs;
  std::error_code ec;
  if (fs::is_directory(input, ec)) {
    for (const auto& entry : fs::directory_iterator(input, ec))
      if (entry.is_regular_file() && looks_like_video(entry.path())) inputs.push_back(entry.path().string());
    std::sort(inputs.begin(), inputs.end());
  } else {
    std::ifstream in(input);
    if (!in) throw Error(ErrorKind::Input, str(input, ": cannot read the list"));
    const fs::path base = fs::path(input).parent_path();
    for (std::string line; std::getline(in, line);) {
      line.erase(0, line.find_first_not_of(" \t"));
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (line.empty() || line[0] == '#') continue;
      inputs.push_back(fs::path(line).is_absolute() || line.find("://") != std::string::npos ? line : (base / line).string());
    }
  }
  if (inputs.empty()) throw Error(ErrorKind::Input, str(input, ": no videos to process"));
  return inputs;
}

BatchReport run_batch(const JobOptions& job, const std::vector<std::string>& inputs, const fs::path& out_dir) {
  std::error_code ec;
  // Outputs written among the inputs would be taken for finished outputs (a.mkv "done" because
  // a.mkv exists), or for inputs by the next run; refused before anything is written.
  for (const std::string& input : inputs) {
    const fs::path folder = fs::path(input).parent_path().empty() ? fs::path(".") : fs::path(input).parent_path();
    if (input.find("://") == std::string::npos && same_file(folder, out_dir))
      throw Error(ErrorKind::Usage, str(out_dir.string(), ": the output folder holds the batch's inputs (", input,
                                        "); give -o another folder"));
  }
  fs::create_directories(out_dir, ec);
  if (!fs::is_directory(out_dir, ec))
    throw Error(ErrorKind::Output, str(out_dir.string(), ": cannot create the output folder for the batch"));
  BatchReport report;
  report.summary = out_dir / "framelift-batch.json";
  nlohmann::json done = nlohmann::json::array(), failed = nlohmann::json::array();
  auto save = [&](size_t next) {
    nlohmann::json remaining = nlohmann::json::array();
    for (size_t i = next; i < inputs.size(); ++i) remaining.push_back(inputs[i]);
    write_file_atomic(report.summary,
                      nlohmann::json{{"done", done}, {"failed", failed}, {"remaining", remaining}}.dump(1) + "\n");
  };
  std::set<fs::path> outputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    save(i);
    JobOptions one = job;
    one.run.input = inputs[i];
    one.run.output = out_dir / (fs::path(inputs[i]).stem().string() + ".mkv");
    if (!outputs.insert(one.run.output).second) {
      failed.push_back({{"input", inputs[i]}, {"error", str(one.run.output.string(), ": another input has the same name")}});
      continue;
    }
    if (fs::exists(one.run.output, ec) && !job.run.overwrite) {
      done.push_back({{"input", inputs[i]}, {"output", one.run.output.string()}});
      continue;  // finished by an earlier run of this batch
    }
    log::info("batch ", i + 1, "/", inputs.size(), ": ", inputs[i]);
    try {
      const JobReport r = run_job(one);
      if (r.assembled) done.push_back({{"input", inputs[i]}, {"output", one.run.output.string()}});
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Interrupted) {
        save(i);
        throw;
      }
      log::error(e.what());
      failed.push_back({{"input", inputs[i]}, {"error", e.what()}});
    }
  }
  save(inputs.size());
  report.done = int(done.size());
  report.failed = int(failed.size());
  return report;
}

}  // namespace framelift::pipeline
