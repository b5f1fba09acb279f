#include "run/frame_processor.h"

#include <ATen/ATen.h>

#include <optional>

#include "infer/frame_tensor.h"
#include "infer/yuv_tensor.h"
#include "media/filter_graph.h"
#include "media/frame_converter.h"
#include "media/hdr_side_data.h"
#include "util/profiler.h"
#include "util/stop.h"

namespace framelift::pipeline {
namespace {

void copy_hdr_frame_side_data(const AVFrame* from, AVFrame* to) {
  for (auto [frame_type, packet_type] : media::kHdrSideData) {
    const AVFrameSideData* sd = av_frame_get_side_data(from, frame_type);
    if (sd && !av_frame_get_side_data(to, frame_type)) {
      AVFrameSideData* dst = av_frame_new_side_data(to, frame_type, sd->size);
      if (dst) memcpy(dst->data, sd->data, sd->size);
    }
  }
}

class FrameProcessor {
 public:
  FrameProcessor(StageChain::Stages& stages, const ProcessPlan& plan, BoundedQueue<media::FramePtr>& to_encode)
      : plan_(plan),
        to_encode_(to_encode),
        frame_graph_(stages.empty() ? nullptr : stages[0]->decoded_frame_graph()),
        chain_(stages, frame_graph_ ? 1 : 0, [this](Frame f) { encode(std::move(f)); }),
        yuv_to_tensor_(chain_.input_device()),
        converter_(plan.output.pix_fmt),
        staged_(!stages.empty()) {
    if (staged_) to_frame_.emplace(plan.output);
    if (staged_ && infer::tensor_convertible(plan.output.pix_fmt, media::effective_matrix(plan.output)))
      tensor_to_yuv_.emplace(plan.output);
  }

  // false: the encoder's queue was aborted.
  bool take(media::FramePtr f) {
    if (!staged_) return pass_through(std::move(f));
    if (frame_graph_) {
      StageScope in_stage(1);
      frame_graph_->push(std::move(f));
      frame_graph_->pull([this](media::FramePtr g) { from_frame_graph(std::move(g)); });
    } else {
      current_ = f.get();
      chain_.push(Frame{tensor_of(current_), f->pts});
      current_ = nullptr;
    }
    return true;
  }

  void flush() {
    if (frame_graph_) {
      StageScope in_stage(1);
      frame_graph_->flush([this](media::FramePtr g) { from_frame_graph(std::move(g)); });
    }
    chain_.flush();
  }

 private:
  bool keeps(int64_t pts, AVRational tb) const {
    const AVRational in_tb = plan_.input_time_base;
    return (plan_.keep_from == INT64_MIN || av_compare_ts(pts, tb, plan_.keep_from, in_tb) >= 0) &&
           (plan_.keep_to == INT64_MAX || av_compare_ts(pts, tb, plan_.keep_to, in_tb) < 0);
  }

  // Whether frames on `device` convert with the tensor ops (when their format allows).
  bool tensor_ops_on(const c10::Device& device) const {
    return plan_.color_conversion == media::ColorConversion::Tensor ||
           (plan_.color_conversion == media::ColorConversion::Auto && device.is_cuda());
  }

  at::Tensor tensor_of(const AVFrame* frame) {
    Section converting("convert", false, 0);
    return tensor_ops_on(chain_.input_device()) && infer::tensor_convertible(frame) ? yuv_to_tensor_.convert(frame)
                                                                                     : to_tensor_.convert(frame);
  }

  bool pass_through(media::FramePtr f) {
    if (!keeps(f->pts, plan_.input_time_base)) return true;
    Section converting("convert", false, 0);
    media::FramePtr out = converter_.convert(std::move(f));
    out->pict_type = AV_PICTURE_TYPE_NONE;  // let the encoder choose its own frame types
    return to_encode_.push(std::move(out));
  }

  void from_frame_graph(media::FramePtr g) {
    current_ = g.get();
    chain_.push(Frame{tensor_of(current_), g->pts});
    current_ = nullptr;
  }

  // What the last stage emits: back to the encoder's format, with the decoded frame's HDR side data.
  void encode(Frame f) {
    if (!keeps(f.pts, plan_.output.time_base)) return;
    media::FramePtr out;
    {
      Section converting("convert", false, 0);
      out = tensor_to_yuv_ && tensor_ops_on(f.image.device()) ? tensor_to_yuv_->convert(f.image) : to_frame_->convert(f.image);
    }
    out->pts = f.pts;
    if (current_) copy_hdr_frame_side_data(current_, out.get());
    Section blocked("process.blocked", false, 0);  // the encoder is behind
    to_encode_.push(std::move(out));
  }

  const ProcessPlan& plan_;
  BoundedQueue<media::FramePtr>& to_encode_;
  media::FilterGraph* frame_graph_;
  StageChain chain_;
  infer::FrameToTensor to_tensor_;
  infer::YuvToTensor yuv_to_tensor_;
  std::optional<infer::TensorToFrame> to_frame_;
  std::optional<infer::TensorToYuv> tensor_to_yuv_;
  media::FrameConverter converter_;
  bool staged_;
  const AVFrame* current_ = nullptr;  // the decoded frame being processed, for its side data
};

}  // namespace

void process_frames(StageChain::Stages& stages, const ProcessPlan& plan, BoundedQueue<media::FramePtr>& decoded,
                    BoundedQueue<media::FramePtr>& to_encode) {
  FrameProcessor processor(stages, plan, to_encode);
  auto next = [&] {
    Section idle("process.idle");  // waiting for decoded frames
    return decoded.pop();
  };
  while (auto f = next()) {
    throw_if_stop_requested();
    if (!processor.take(std::move(*f))) return;
  }
  if (decoded.aborted()) return;
  processor.flush();
  to_encode.close();
}

}  // namespace framelift::pipeline
