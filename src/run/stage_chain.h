#pragma once
// The stages of a pipeline joined into one chain: what stage i emits is pushed into stage i + 1,
// and what the last one emits goes to the chain's sink. A frame in device memory moves back to the
// host only for a stage that computes there (Stage::device), so a run of GPU stages keeps its
// frames on the GPU. The runner's process thread and the public framelift::Pipeline both run
// their stages through this class.
//
// Ownership: the stages are the caller's and must outlive the chain (a job worker's warm stages
// serve one chain per segment). Thread-safety: one thread at a time, like the stages.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "media/video_format.h"
#include "pipeline/stage.h"

namespace framelift::pipeline {

class StageChain {
 public:
  using Sink = std::function<void(Frame)>;
  using Stages = std::vector<std::unique_ptr<Stage>>;

  // The chain over stages[first, end): the runner starts at 1 when stage 0 filters the decoded
  // frames itself (Stage::decoded_frame_graph). Each stage's pushes and flushes are charged to it
  // in a profile (util/profiler.h: "N:stage", N counting from 1).
  StageChain(Stages& stages, size_t first, Sink sink);
  StageChain(const StageChain&) = delete;
  StageChain& operator=(const StageChain&) = delete;

  // Configures every stage (all of them, from 0) in order with what the one before produces and
  // returns the last one's format. Throws Error(Usage) when a stage would make frames larger than
  // max_frame_pixels (0: any; a caller's PipelinePolicy).
  static media::VideoFormat configure(Stages& stages, const media::VideoFormat& input, int64_t max_frame_pixels);

  bool empty() const { return first_ == stages_.size(); }
  // Where the first stage of the chain computes (CPU for an empty chain): where the input
  // frames are best converted.
  c10::Device input_device() const;
  void push(Frame frame) { emit_[first_](std::move(frame)); }
  // Flushes the stages in order, each into the next.
  void flush();

 private:
  Stages& stages_;
  size_t first_;
  std::vector<Stage::Emit> emit_;  // emit_[i] feeds stage i; emit_[n] is the sink
};

}  // namespace framelift::pipeline
