#include "framelift/pipeline.h"

#include <ATen/ATen.h>

#include <cstring>
#include <deque>
#include <optional>

#include "api/moved_from.h"
#include "api/plan_pipeline.h"
#include "api/policy_check.h"
#include "api/video_shape.h"
#include "media/video_format.h"
#include "pipeline/option_schema.h"
#include "pipeline/pipeline_policy.h"
#include "pipeline/stage.h"
#include "run/stage_chain.h"
#include "pipeline/process_settings.h"
#include "pipeline/stage_registry.h"
#include "pipeline/stage_spec.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift {
namespace {

namespace fp = framelift::pipeline;

std::string kind_name(fp::OptionType t) {
  switch (t) {
    case fp::OptionType::Integer: return "integer";
    case fp::OptionType::Number: return "number";
    case fp::OptionType::Flag: return "flag";
    case fp::OptionType::Choice: return "choice";
    case fp::OptionType::Rate: return "rate";
    case fp::OptionType::Size: return "size";
    case fp::OptionType::Text: return "text";
  }
  return "text";
}

std::vector<fp::StageSpec> internal_specs(const std::vector<StageSpec>& stages) {
  std::vector<fp::StageSpec> specs;
  for (const StageSpec& s : stages) specs.push_back({s.name, fp::StageOptions(s.name, s.options)});
  return specs;
}

// `stages` once `policy` allows them (else Error(Usage)), for a constructor to build.
const std::vector<StageSpec>& checked(const std::vector<StageSpec>& stages, const PipelinePolicy& policy) {
  api::check_stages(internal_specs(stages), policy);
  return stages;
}

}  // namespace

std::vector<StageSpec> parse_pipeline(const std::string& text) {
  std::vector<StageSpec> out;
  for (const fp::StageSpec& s : fp::parse_pipeline(text)) out.push_back({s.name, s.options.values()});
  return out;
}

std::vector<StageInfo> list_stages() {
  std::vector<StageInfo> out;
  for (const fp::StageInfo& s : fp::registered_stages()) {
    StageInfo info{s.name, s.summary, {}, fp::describe_options(s.options)};
    for (const fp::OptionSpec& o : s.options) {
      // The schema's own one-option description, less the name: "N (1 <= N <= 16; ...)".
      const std::string described = fp::describe_options({o});
      const std::string opens = o.role == fp::OptionRole::ModelRef ? "model" : o.role == fp::OptionRole::File ? "file" : "";
      info.options.push_back({o.name, kind_name(o.type), o.default_value, described.substr(o.name.size() + 1), o.help, opens});
    }
    out.push_back(std::move(info));
  }
  return out;
}

struct Pipeline::Impl {
  std::vector<StageSpec> specs;
  std::vector<std::unique_ptr<fp::Stage>> stages;
  std::optional<fp::StageChain> chain;  // the runner's chain over `stages`, into `ready`
  std::deque<Frame> ready;
  media::VideoFormat in, out;
  bool configured = false;
  int64_t max_frame_pixels = 0;  // a policy's; 0: any

  void wire() {
    chain.emplace(stages, 0, [this](fp::Frame f) {
      at::Tensor rgb = f.image.to(at::kCPU, at::kFloat).contiguous();
      Frame g{int(rgb.size(2)), int(rgb.size(1)), f.pts, std::vector<float>(size_t(rgb.numel()))};
      std::memcpy(g.rgb.data(), rgb.data_ptr<float>(), g.rgb.size() * sizeof(float));
      ready.push_back(std::move(g));
    });
  }
};

Pipeline::Pipeline(const std::string& text, const std::map<std::string, std::string>& defaults)
    : Pipeline(framelift::parse_pipeline(text), defaults) {}

Pipeline::Pipeline(const std::vector<StageSpec>& stages, const std::map<std::string, std::string>& defaults)
    : impl_(std::make_unique<Impl>()) {
  impl_->specs = stages;
  std::vector<fp::StageSpec> specs = internal_specs(stages);
  for (fp::StageSpec& spec : specs) spec.options.set_defaults(defaults);
  // Process-wide settings (threads, memory budgets) are made here, once, before the stages.
  fp::apply(fp::process_settings(specs));
  for (fp::StageSpec& spec : specs) {
    impl_->stages.push_back(fp::make_stage(spec));
  }
  impl_->wire();
}

Pipeline::Pipeline(const std::string& text, const std::map<std::string, std::string>& defaults, const PipelinePolicy& policy)
    : Pipeline(framelift::parse_pipeline(text), defaults, policy) {}

// Checked before the delegated constructor builds anything: a refused stage loads nothing.
Pipeline::Pipeline(const std::vector<StageSpec>& stages, const std::map<std::string, std::string>& defaults,
                   const PipelinePolicy& policy)
    : Pipeline(checked(stages, policy), defaults) {
  impl_->max_frame_pixels = policy.max_frame_pixels;
}

Pipeline::~Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;

VideoShape Pipeline::configure(const VideoShape& input) {
  Impl& s = api::live(impl_, "Pipeline");
  if (s.configured) throw Error(ErrorKind::Usage, "Pipeline::configure: already configured; reset() first");
  s.in = api::format_of(input, "Pipeline::configure");
  s.out = fp::StageChain::configure(s.stages, s.in, s.max_frame_pixels);
  s.configured = true;
  return api::shape_of(s.out);
}

void Pipeline::send(Frame frame) {
  Impl& s = api::live(impl_, "Pipeline");
  if (!s.configured) throw Error(ErrorKind::Usage, "Pipeline::send: configure() first");
  const media::VideoFormat& in = s.in;
  if (frame.width != in.width || frame.height != in.height || frame.rgb.size() != size_t(3) * in.width * in.height)
    throw Error(ErrorKind::Input, str("Pipeline::send: a ", frame.width, "x", frame.height, " frame with ", frame.rgb.size(),
                                      " values; the pipeline was configured for ", in.width, "x", in.height));
  at::Tensor image = at::from_blob(frame.rgb.data(), {3, frame.height, frame.width}, at::kFloat).clone();
  s.chain->push(fp::Frame{image, frame.pts});
}

std::optional<Frame> Pipeline::receive() {
  Impl& s = api::live(impl_, "Pipeline");
  if (s.ready.empty()) return std::nullopt;
  Frame f = std::move(s.ready.front());
  s.ready.pop_front();
  return f;
}

void Pipeline::flush() {
  Impl& s = api::live(impl_, "Pipeline");
  if (!s.configured) return;
  s.chain->flush();
}

void Pipeline::reset() {
  Impl& s = api::live(impl_, "Pipeline");
  for (auto& stage : s.stages) stage->reset();
  s.ready.clear();
  s.configured = false;
}

std::vector<StageReport> Pipeline::stages() const {
  const Impl& s = api::live(impl_, "Pipeline");
  // The planner's view of the same stages; without an input rate an interpolate:fps= stage has
  // no frame factor, which the cost per call does not need.
  std::vector<plan::StageSpec> costs;
  try {
    costs = api::plan_stages_for(internal_specs(s.specs), {0, 0, 25});
  } catch (const Error&) {
    costs.clear();  // a catalog entry the planner cannot read: report no costs rather than fail
  }
  std::vector<StageReport> out;
  for (size_t i = 0; i < s.stages.size(); ++i) {
    StageReport r{s.stages[i]->name(), s.specs[i].options, s.stages[i]->context_frames(),
                  s.stages[i]->device().str()};
    if (i < costs.size() && costs[i].runs_network()) {
      r.priced = true;
      r.flops_per_pixel = costs[i].cost.flops_per_px();
      r.activation_bytes_per_pixel = costs[i].cost.peak_elems_per_px * 4;
      r.parameters = costs[i].cost.params;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace framelift
