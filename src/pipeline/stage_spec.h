#pragma once
// The text form of a pipeline: "resize:scale=2,upscale:model=realesr-animevideov3".
// Stages are separated by commas; a stage is NAME[:KEY=VALUE[:KEY=VALUE...]]. A comma-separated
// item of the form KEY=VALUE continues the previous stage ("resize:w=1280,h=720"), so both
// spellings users try work.
//
// Quoting: a value that starts with ', " or [ runs to its closing ', " or ] (brackets nest), so it
// may hold commas and colons: filter:graph='crop=iw-8:ih-8,unsharp' or
// filter:graph=[crop=iw-8:ih-8,unsharp]. The quotes are removed, the text between is kept exactly.
// Unquoted values are as before (a libavfilter graph without ',' or ':' needs no quotes:
// filter:graph=hqdn3d=4). A bare number continues the value before it, so an unquoted list
// keeps its commas: model:file=m.pt:box=10,20,64,48.
#include <map>
#include <string>
#include <vector>

namespace framelift::pipeline {

class StageOptions {
 public:
  StageOptions() = default;
  StageOptions(std::string stage, std::map<std::string, std::string> values)
      : stage_(std::move(stage)), values_(std::move(values)) {}

  // Defaults for keys the stage text does not set: the CLI's --device, --tile, ... apply to every
  // stage that reads them, and are not "unknown options" for stages that don't.
  void set_defaults(std::map<std::string, std::string> defaults) { defaults_ = std::move(defaults); }

  // The text as given; stages read their options typed, from validate_options (option_values.h),
  // never from here, so that no default is spelled outside the stage's schema.
  const std::map<std::string, std::string>& values() const { return values_; }
  const std::map<std::string, std::string>& defaults() const { return defaults_; }

 private:
  std::string stage_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> defaults_;
};

struct StageSpec {
  std::string name;
  StageOptions options;
};

// Throws Error(Usage) on syntax errors.
std::vector<StageSpec> parse_pipeline(const std::string& text);

}  // namespace framelift::pipeline
