#pragma once
// A stage made of a libavfilter graph (media::FilterGraph): `filter`, `deinterlace`, and the
// classical denoisers. Frames cross into the graph as GBRPF32 (the pipeline's float RGB, planes
// reordered, no rounding) and come back as GBRPF32; a filter that does not take float frames gets
// a conversion libavfilter inserts itself (to 16-bit RGB where the filter has it, which keeps 16
// bits of the float values).
//
// A subclass says which graph it wants for its input; an empty description passes frames through
// untouched (deinterlace on progressive input). A subclass that asks for decoded frames also
// offers the same graph on the decoded format (Stage::decoded_frame_graph), which the runner uses
// when the stage comes first.
#include <optional>
#include <string>

#include "media/filter_graph.h"
#include "pipeline/stage.h"

namespace framelift::pipeline {

class GraphStage : public Stage {
 public:
  media::VideoFormat configure(const media::VideoFormat& input) override;
  void push(Frame frame, const Emit& emit) override;
  void flush(const Emit& emit) override;
  // The graphs are rebuilt by the next configure(): they hold the stretch's frames.
  void reset() override {
    graph_.reset();
    decoded_graph_.reset();
  }
  media::FilterGraph* decoded_frame_graph() override { return decoded_graph_ ? &*decoded_graph_ : nullptr; }

 protected:
  // The filter graph description for this input ("" for none). Errors name the stage.
  virtual std::string graph_description(const media::VideoFormat& input) = 0;
  // Adjusts the format the graph reports (deinterlace marks it progressive).
  virtual media::VideoFormat adjust_output(media::VideoFormat output) { return output; }
  // Whether the graph should also be offered on the decoded frames (see Stage).
  virtual bool wants_decoded_frames() const { return false; }

 private:
  void emit_frame(media::FramePtr frame, const Emit& emit);

  std::optional<media::FilterGraph> graph_;
  std::optional<media::FilterGraph> decoded_graph_;
};

}  // namespace framelift::pipeline
