#include "server/preview.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include <framelift/error.h>
#include <framelift/pipeline.h>
#include <framelift/sink.h>
#include <framelift/source.h>

#include "util/str.h"

namespace framelift::server {
namespace {

// A few frames from `time_s` on: temporal stages (interpolation, a temporal filter) need
// neighbours before they give their first frame.
constexpr int kFramesFed = 3;

// The pipeline as one Pipeline per stage, so that the frame size between any two stages is
// known (and held to the limit) before anything runs.
class StageByStage {
 public:
  // The whole text is held to `policy` before the first stage is built, then each stage again
  // as it is built (a stage alone is what runs).
  StageByStage(const std::string& text, const std::optional<PipelinePolicy>& policy) {
    if (policy) check_pipeline(text, *policy);
    // The preview holds frames to its own max_pixels in configure(), with its own message.
    std::optional<PipelinePolicy> per_stage = policy;
    if (per_stage) per_stage->max_frame_pixels = 0;
    for (const StageSpec& s : parse_pipeline(text)) {
      if (per_stage) stages_.emplace_back(std::vector<StageSpec>{s}, std::map<std::string, std::string>{}, *per_stage);
      else stages_.emplace_back(std::vector<StageSpec>{s});
      names_.push_back(s.name);
    }
  }

  VideoShape configure(VideoShape shape, int64_t max_pixels) {
    for (size_t i = 0; i < stages_.size(); ++i) {
      shape = stages_[i].configure(shape);
      const int64_t pixels = int64_t(shape.width) * shape.height;
      if (max_pixels > 0 && pixels > max_pixels)
        throw Error(ErrorKind::Usage, str("pipeline: ", names_[i], " makes ", shape.width, "x", shape.height,
                                          " frames; previews are limited to ", max_pixels, " pixels a frame"));
    }
    return shape;
  }

  void send(Frame f) { pass(0, std::move(f)); }
  void flush() {
    for (size_t i = 0; i < stages_.size(); ++i) {
      stages_[i].flush();
      drain(i);
    }
  }
  std::optional<Frame> receive() {
    if (out_.empty()) return std::nullopt;
    Frame f = std::move(out_.front());
    out_.erase(out_.begin());
    return f;
  }

 private:
  void pass(size_t i, Frame f) {
    if (i == stages_.size()) return out_.push_back(std::move(f));
    stages_[i].send(std::move(f));
    drain(i);
  }
  void drain(size_t i) {
    while (std::optional<Frame> g = stages_[i].receive()) pass(i + 1, std::move(*g));
  }

  std::vector<Pipeline> stages_;
  std::vector<std::string> names_;
  std::vector<Frame> out_;
};

// The chain's first output frame for the frames of `source`.
template <class Chain>
std::optional<Frame> first_output(Chain& p, Source& source) {
  for (int i = 0; i < kFramesFed; ++i) {
    std::optional<Frame> f = source.read();
    if (!f) break;
    p.send(std::move(*f));
    if (auto g = p.receive()) return g;
  }
  p.flush();
  return p.receive();
}

}  // namespace

void render_preview(const PreviewRequest& r, const std::filesystem::path& png) {
  Source for_after(r.input, {.start_s = r.time_s, .max_frames = kFramesFed});
  StageByStage pipeline(r.pipeline, r.policy);
  const VideoShape after_shape = pipeline.configure(for_after.shape(), r.max_pixels);
  std::optional<Frame> after = first_output(pipeline, for_after);
  if (!after) throw Error(ErrorKind::Input, str(r.input, ": no frame at ", r.time_s, " s for the preview"));
  Source for_before(r.input, {.start_s = r.time_s, .max_frames = 1});
  Pipeline bicubic(str("resize:w=", after->width, ":h=", after->height, ":algo=bicubic"));
  bicubic.configure(for_before.shape());
  std::optional<Frame> before = first_output(bicubic, for_before);
  if (!before) throw Error(ErrorKind::Input, str(r.input, ": no frame at ", r.time_s, " s for the preview"));
  // Left half before, right half after: one picture, the seam where they meet.
  Frame side = *after;
  const int half = side.width / 2;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < side.height; ++y)
      std::copy_n(&before->rgb[(size_t(c) * before->height + y) * before->width], half, &side.rgb[(size_t(c) * side.height + y) * side.width]);
  SinkOptions png_options;
  png_options.codec = "png";
  png_options.pix_fmt = "rgb24";
  png_options.overwrite = true;
  Sink out(png.string(), after_shape, png_options);
  out.write(side);
  out.close();
}

}  // namespace framelift::server
