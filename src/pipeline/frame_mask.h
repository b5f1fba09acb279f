#pragma once
// The mask a `model` stage hands an inpainting module with each frame: a float tensor
// [1, 1, H, W] on the CPU, 1 where the module is to fill (remove, repaint), 0 elsewhere.
//
// Sources, combined (a pixel is to fill if any source says so):
// * a rectangle, `box=x,y,w,h` in pixels of the frames the stage gets (it must lie inside them);
// * a still image: one mask for every frame;
// * a mask video: the mask frame nearest in time to each frame, times counted from each video's
//   first frame (so a job's segment, which starts mid-video, gets the same masks as one pass).
// In images and videos, white is fill: a pixel fills when its RGB mean is at least 0.5. A mask of
// another size is scaled (bilinear) to the frame's size first.
//
// Not thread-safe: one per stage.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "infer/frame_tensor.h"
#include "media/av_ptr.h"
#include "media/decoder.h"
#include "media/demuxer.h"

namespace framelift::pipeline {

struct MaskBox {
  int64_t x = 0, y = 0, width = 0, height = 0;
};

// "x,y,w,h" (whole pixels, w and h positive). Throws Error(Usage) naming the option.
MaskBox parse_mask_box(const std::string& text);

class FrameMask {
 public:
  // `file`: "" for none; else an image or video FFmpeg reads, opened now (Error(Input) if it
  // cannot be). At least one source must be given.
  FrameMask(const std::string& file, std::optional<MaskBox> box);
  ~FrameMask();

  // The mask for the frame `seconds` after the video's first frame, at height x width.
  // Throws Error(Usage) for a box outside the frame, Error(Input) for a mask video without frames.
  at::Tensor mask_for(double seconds, int64_t height, int64_t width);

 private:
  struct Decoded {
    double seconds;
    media::FramePtr frame;
  };
  bool read_one();  // decodes up to one more mask frame into ahead_; false at the end
  void advance_to(double seconds);  // makes the mask frame nearest to `seconds` current
  at::Tensor file_mask(int64_t height, int64_t width);

  std::string file_;
  std::optional<MaskBox> box_;
  std::unique_ptr<media::Demuxer> demux_;
  std::unique_ptr<media::Decoder> decoder_;
  media::PacketPtr packet_;
  infer::FrameToTensor to_tensor_;
  bool ended_ = false;
  int64_t first_pts_ = AV_NOPTS_VALUE;
  std::deque<Decoded> ahead_;        // decoded, not yet current
  std::optional<Decoded> current_;   // the mask frame in use
  at::Tensor current_mask_;          // current_ as a mask at the last size asked for
};

}  // namespace framelift::pipeline
