#pragma once
// A stage's options, declared once: name, type, default, allowed range or values, help. The
// declaration drives validation (before the stage is built, so a bad value never starts work),
// `framelift stages` and the help text; the stage reads values that are known to parse and lie
// in range. Adding an option is one line in the stage's schema.
#include <limits>
#include <string>
#include <vector>

#include "pipeline/option_values.h"
#include "pipeline/stage_spec.h"

namespace framelift::pipeline {

enum class OptionType {
  Integer,  // a whole number within [min, max]
  Number,   // a finite number within [min, max] (min exclusive when min_exclusive)
  Flag,     // 0 or 1
  Choice,   // one of `choices`
  Rate,     // a frame rate: 60, 59.94, 60000/1001, within (0, max]
  Size,     // a byte size: 512M, 4G, 1048576
  Text,     // anything (a file, a model name, a filter graph, a device): the stage checks it
};

// What an option's value is to a caller that runs pipelines it did not write (pipeline_policy.h):
// declared here, beside the option, so the policy knows which values name files without a list
// of its own.
enum class OptionRole {
  Plain,        // a value the schema's type and range settle
  ModelRef,     // a model name (catalog, installed) or a model file
  File,         // a file path: a TorchScript module, a mask image or video
  FilterGraph,  // a libavfilter graph description
  Device,       // auto, cpu, cuda, cuda:N
  FrameSize,    // an output width or height in pixels
  Tile,         // a tile size in pixels
  Batch,        // frames or tiles per forward call
};

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::Text;
  // The one place the default is spelled: shown in help and filled in by validate_options. ""
  // when it depends on other options or the machine, or when there is none (the option then has
  // no value unless given).
  std::string default_value;
  std::string help;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  std::vector<std::string> choices;
  std::vector<std::string> aliases;  // other spellings a Choice accepts, not shown in help
  OptionRole role = OptionRole::Plain;
};

using OptionSchema = std::vector<OptionSpec>;

// Short constructors for schema tables.
OptionSpec integer_option(std::string name, std::string default_value, double min, double max, std::string help);
OptionSpec number_option(std::string name, std::string default_value, double min, double max, std::string help,
                         bool min_exclusive = false);
OptionSpec flag_option(std::string name, std::string default_value, std::string help);
OptionSpec choice_option(std::string name, std::string default_value, std::vector<std::string> choices,
                         std::string help);
OptionSpec rate_option(std::string name, double max, std::string help);
OptionSpec size_option(std::string name, std::string help);
OptionSpec text_option(std::string name, std::string default_value, std::string help);

// `o` with its role set: with_role(text_option("model", ...), OptionRole::ModelRef).
OptionSpec with_role(OptionSpec o, OptionRole role);

// `a` followed by the options of `b` that `a` does not declare.
OptionSchema combine(OptionSchema a, const OptionSchema& b);

// The options typed and complete (option_values.h): what the stage's text set, else the CLI's
// default, else the schema's. Throws Error(Usage) with one line naming the stage, the option, the
// value and what is allowed: an option the stage does not declare, a value that does not parse
// (nan, inf, 1e999, "2x"), or one out of range. Values set by the stage's text are all checked;
// values that came from the CLI's defaults (StageOptions::set_defaults) only where the stage
// declares them (the others are not the stage's and are left out).
OptionValues validate_options(const std::string& stage, const OptionSchema& schema, const StageOptions& options);

// The option of that name in `schema`, or nullptr.
const OptionSpec* find_option(const OptionSchema& schema, const std::string& name);

// "scale=F (0 < F <= 16), algo=lanczos|bicubic|... (default lanczos)": one line for help.
std::string describe_options(const OptionSchema& schema);

}  // namespace framelift::pipeline
