#pragma once
// The process thread of a run: decoded frames in, frames for the encoder out. Decoded frames
// become tensors on the first stage's device (infer/yuv_tensor.h on a GPU or when asked, else
// infer/frame_tensor.h), go through the StageChain, and come back in the encoder's format; with
// no stages they are only converted. A first stage that filters the decoded frames itself
// (Stage::decoded_frame_graph: deinterlace) gets them before the conversion. Output frames
// outside the window's keep range (made from a segment's context frames) are dropped here.
//
// Ownership: the stages are the caller's. One thread; run() once.
#include "media/av_ptr.h"
#include "media/color_conversion.h"
#include "media/video_format.h"
#include "run/bounded_queue.h"
#include "run/input_window.h"
#include "run/stage_chain.h"

namespace framelift::pipeline {

struct ProcessPlan {
  AVRational input_time_base{1, 25};     // the decoded frames' (the keep range's)
  media::VideoFormat output;             // what the encoder takes
  media::ColorConversion color_conversion = media::ColorConversion::Auto;
  int64_t keep_from = INT64_MIN, keep_to = INT64_MAX;  // from the InputWindow
};

// Pops `decoded` until it is closed, pushes into `to_encode` and closes it. Returns early, leaving
// `to_encode` open, when either queue is aborted (a failure elsewhere: the caller's latch knows).
void process_frames(StageChain::Stages& stages, const ProcessPlan& plan, BoundedQueue<media::FramePtr>& decoded,
                    BoundedQueue<media::FramePtr>& to_encode);

}  // namespace framelift::pipeline
