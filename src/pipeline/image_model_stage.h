#pragma once
// A stage that runs one ImageModel over every frame (upscale, denoise): the model on the chosen
// device and precision, batched and tiled to fit memory (infer/model_runner.h), plus a classical
// resize when the requested scale differs from the model's (an x4 model with scale=2 gives a
// sharper x2 than an x2 model; a Real-CUGAN x2 denoiser with scale=1 is scaled back down).
#include <memory>
#include <string>
#include <vector>

#include "infer/model_runner.h"
#include "infer/image_model.h"
#include "pipeline/model_run_options.h"
#include "pipeline/stage.h"
#include "pipeline/option_values.h"

namespace framelift::pipeline {


class ImageModelStage : public Stage {
 public:
  // `stage` names the stage in messages; `label` the model in the log; scale 0: the model's own.
  ImageModelStage(std::string stage, std::string label, std::unique_ptr<models::ImageModel> model,
                  const OptionValues& options, double scale);

  std::string name() const override { return stage_; }
  media::VideoFormat configure(const media::VideoFormat& in) override;
  void push(Frame frame, const Emit& emit) override;
  void flush(const Emit& emit) override;
  void reset() override;
  c10::Device device() const override;

 private:
  void run_pending(const Emit& emit);

  std::string stage_, label_;
  double scale_;
  std::unique_ptr<infer::ModelRunner> runner_;
  std::unique_ptr<Stage> final_resize_;
  std::vector<Frame> pending_;
};

}  // namespace framelift::pipeline
