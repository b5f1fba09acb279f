#include "deploy/prepared_job.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::deploy {
namespace {

fs::path common_ancestor(const fs::path& a, const fs::path& b) {
  fs::path out;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end() && ib != b.end() && *ia == *ib; ++ia, ++ib) out /= *ia;
  return out;
}

}  // namespace

PreparedJob read_prepared_job(const fs::path& job_dir) {
  fs::path spec_file = job_dir / "job.json";
  std::ifstream spec_in(spec_file);
  if (!spec_in)
    throw Error(ErrorKind::Input, str(job_dir.string(), ": no job.json; prepare the job first (framelift run ... --job-dir ",
                                      job_dir.string(), " --prepare)"));
  PreparedJob job;
  try {
    nlohmann::json spec = nlohmann::json::parse(spec_in);
    job.input = spec.at("input").get<std::string>();
    job.output = spec.at("output").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::Input, str(spec_file.string(), ": not a framelift job spec (", e.what(), ")"));
  }
  std::ifstream plan_in(job_dir / "plan.json");
  nlohmann::json plan = nlohmann::json::parse(plan_in, nullptr, false);
  if (plan.is_object() && plan.contains("segments") && plan["segments"].is_array()) job.segments = int(plan["segments"].size());
  return job;
}

fs::path shared_folder(const fs::path& job_dir, const PreparedJob& job) {
  fs::path shared = job_dir.lexically_normal();
  for (const std::string& file : {job.input, job.output}) {
    fs::path p(file);
    if (file.find("://") != std::string::npos || !p.is_absolute()) continue;
    shared = common_ancestor(shared, p.lexically_normal().parent_path());
  }
  return shared;
}

}  // namespace framelift::deploy
