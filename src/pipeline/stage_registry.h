#pragma once
// Stages by name. Each stage file registers itself with one line:
//   FRAMELIFT_REGISTER_STAGE(resize, "Classical resize (swscale)", resize_options(), make_resize_stage);
// so adding a stage needs no edit anywhere else. The schema (pipeline/option_schema.h) is the one
// declaration of the stage's options: make_stage validates a spec against it before the factory
// runs, and `framelift stages` prints it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/option_schema.h"
#include "pipeline/stage.h"
#include "pipeline/stage_spec.h"

namespace framelift::pipeline {

// Gets the options validated and typed (option_values.h): every option of the stage's schema,
// defaults filled in from it.
using StageFactory = std::function<std::unique_ptr<Stage>(const OptionValues&)>;
// Why a stage with these options must see the whole video in one piece (a job then runs it as one
// segment), or "" when it works on segments. Asked before any stage is built, so it must be cheap.
using WholeVideoCheck = std::function<std::string(const OptionValues&)>;

struct StageInfo {
  std::string name;
  std::string summary;
  OptionSchema options;
  StageFactory factory;
  WholeVideoCheck whole_video = nullptr;  // null: the stage always works on segments
};

bool register_stage(StageInfo info);
const std::vector<StageInfo>& registered_stages();
// The registered stage of that name, or nullptr.
const StageInfo* find_stage(const std::string& name);
// Throws Error(Usage) for an unknown stage, listing the known ones, and for an option the stage
// does not declare or a value outside its schema.
std::unique_ptr<Stage> make_stage(const StageSpec& spec);
// The first stage of the pipeline that must see the whole video, as "stage NAME: REASON", or "".
// Unknown stages and bad options give "" here: make_stages reports them.
std::string whole_video_reason(const std::string& pipeline_text);
// `defaults` fill options a stage's text leaves out (see StageOptions::set_defaults).
std::vector<std::unique_ptr<Stage>> make_stages(const std::string& pipeline_text,
                                                const std::map<std::string, std::string>& defaults = {});

}  // namespace framelift::pipeline

// A fifth argument, a WholeVideoCheck, marks a stage that may need the whole video.
#define FRAMELIFT_REGISTER_STAGE(id, summary, options, factory, ...) \
  static const bool framelift_stage_registered_##id =                \
      ::framelift::pipeline::register_stage({#id, summary, options, factory __VA_OPT__(, ) __VA_ARGS__})
