#include "pipeline/frame_mask.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <vector>

#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {

MaskBox parse_mask_box(const std::string& text) {
  std::vector<int64_t> v;
  const char* p = text.c_str();
  for (;;) {
    char* end = nullptr;
    const long long n = std::strtoll(p, &end, 10);
    if (end == p) break;
    v.push_back(n);
    p = end;
    if (*p != ',') break;
    ++p;
  }
  if (v.size() != 4 || *p != '\0' || v[0] < 0 || v[1] < 0 || v[2] <= 0 || v[3] <= 0)
    throw Error(ErrorKind::Usage, str("stage model: box=", text, " is not x,y,w,h in whole pixels (w and h positive)"));
  return {v[0], v[1], v[2], v[3]};
}

FrameMask::FrameMask(const std::string& file, std::optional<MaskBox> box) : file_(file), box_(box) {
  if (file.empty() && !box) throw Error(ErrorKind::Usage, "stage model: a mask needs mask=FILE or box=x,y,w,h");
  if (file.empty()) return;
  demux_ = std::make_unique<media::Demuxer>(file);
  decoder_ = std::make_unique<media::Decoder>(demux_->video_stream(), media::DecoderOptions{}, file);
  packet_ = media::make_packet();
}

FrameMask::~FrameMask() = default;

bool FrameMask::read_one() {
  const size_t before = ahead_.size();
  const AVRational tb = demux_->video_stream()->time_base;
  auto keep = [&](media::FramePtr f) {
    // A still image may carry no timestamp: it then holds from the previous mask frame's time.
    double seconds = ahead_.empty() ? (current_ ? current_->seconds : 0.0) : ahead_.back().seconds;
    if (f->pts != AV_NOPTS_VALUE) {
      if (first_pts_ == AV_NOPTS_VALUE) first_pts_ = f->pts;
      seconds = double(f->pts - first_pts_) * av_q2d(tb);
    }
    ahead_.push_back({seconds, std::move(f)});
  };
  while (ahead_.size() == before && !ended_) {
    if (!demux_->read(packet_.get())) {
      decoder_->decode(nullptr, keep);
      ended_ = true;
    } else if (packet_->stream_index == demux_->video_index()) {
      decoder_->decode(packet_.get(), keep);
    }
  }
  return ahead_.size() > before;
}

void FrameMask::advance_to(double seconds) {
  if (!current_) {
    if (ahead_.empty() && !read_one()) throw Error(ErrorKind::Input, str(file_, ": the mask has no frames"));
    current_ = std::move(ahead_.front());
    ahead_.pop_front();
    current_mask_ = at::Tensor();
  }
  // Frames come in time order, so the nearest mask frame only moves forward (ties: the earlier).
  while ((!ahead_.empty() || read_one()) && ahead_.front().seconds - seconds < seconds - current_->seconds) {
    current_ = std::move(ahead_.front());
    ahead_.pop_front();
    current_mask_ = at::Tensor();
  }
}

at::Tensor FrameMask::file_mask(int64_t height, int64_t width) {
  if (current_mask_.defined() && current_mask_.size(2) == height && current_mask_.size(3) == width) return current_mask_;
  at::Tensor grey = to_tensor_.convert(current_->frame.get()).mean(0).view({1, 1, current_->frame->height, current_->frame->width});
  if (grey.size(2) != height || grey.size(3) != width)
    grey = at::upsample_bilinear2d(grey, {height, width}, /*align_corners=*/false);
  current_mask_ = grey.ge(0.5).to(at::kFloat);
  return current_mask_;
}

at::Tensor FrameMask::mask_for(double seconds, int64_t height, int64_t width) {
  at::Tensor mask;
  if (demux_) {
    advance_to(seconds);
    mask = file_mask(height, width).clone();
  } else {
    mask = at::zeros({1, 1, height, width}, at::kFloat);
  }
  if (box_) {
    const MaskBox& b = *box_;
    if (b.x + b.width > width || b.y + b.height > height)
      throw Error(ErrorKind::Usage, str("stage model: box=", b.x, ",", b.y, ",", b.width, ",", b.height, " lies outside the ",
                                        width, "x", height, " frames"));
    mask.narrow(2, b.y, b.height).narrow(3, b.x, b.width).fill_(1.0);
  }
  return mask;
}

}  // namespace framelift::pipeline
