#include "run/stage_chain.h"

#include <ATen/ATen.h>

#include "pipeline/pipeline_policy.h"
#include "util/profiler.h"

namespace framelift::pipeline {

StageChain::StageChain(Stages& stages, size_t first, Sink sink) : stages_(stages), first_(first), emit_(stages.size() + 1) {
  emit_[stages_.size()] = std::move(sink);
  for (size_t i = stages_.size(); i-- > first_;)
    emit_[i] = [this, i](Frame f) {
      StageScope in_stage(int(i) + 1);
      // Asked per frame: a stage knows its device only once configured, after the chain is made.
      if (!f.image.is_cpu() && stages_[i]->device().is_cpu()) {
        Section download("download");
        f.image = f.image.to(at::kCPU);
      }
      stages_[i]->push(std::move(f), emit_[i + 1]);
    };
}

media::VideoFormat StageChain::configure(Stages& stages, const media::VideoFormat& input, int64_t max_frame_pixels) {
  media::VideoFormat f = input;
  for (auto& stage : stages) {
    f = stage->configure(f);
    check_frame_pixels(stage->name(), f.width, f.height, max_frame_pixels);
  }
  return f;
}

c10::Device StageChain::input_device() const { return empty() ? c10::Device(c10::kCPU) : stages_[first_]->device(); }

void StageChain::flush() {
  for (size_t i = first_; i < stages_.size(); ++i) {
    StageScope in_stage(int(i) + 1);
    stages_[i]->flush(emit_[i + 1]);
  }
}

}  // namespace framelift::pipeline
