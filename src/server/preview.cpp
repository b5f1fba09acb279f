#include "server/preview.h"

#include <algorithm>
#include <optional>

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

// The pipeline's first output frame for the frames of `source`, and the shape it has.
std::optional<Frame> first_output(Pipeline& p, Source& source, VideoShape& out_shape) {
  out_shape = p.configure(source.shape());
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
  VideoShape after_shape, before_shape;
  Source for_after(r.input, {.start_s = r.time_s, .max_frames = kFramesFed});
  Pipeline pipeline(r.pipeline);
  std::optional<Frame> after = first_output(pipeline, for_after, after_shape);
  if (!after) throw Error(ErrorKind::Input, str(r.input, ": no frame at ", r.time_s, " s for the preview"));
  Source for_before(r.input, {.start_s = r.time_s, .max_frames = 1});
  Pipeline bicubic(str("resize:w=", after->width, ":h=", after->height, ":algo=bicubic"));
  std::optional<Frame> before = first_output(bicubic, for_before, before_shape);
  if (!before) throw Error(ErrorKind::Input, str(r.input, ": no frame at ", r.time_s, " s for the preview"));
  // Left half before, right half after: one picture, the seam where they meet.
  Frame side = *after;
  const int half = side.width / 2;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < side.height; ++y)
      std::copy_n(&before->rgb[(size_t(c) * before->height + y) * before->width], half, &side.rgb[(size_t(c) * side.height + y) * side.width]);
  Sink out(png.string(), after_shape, {.codec = "png", .pix_fmt = "rgb24", .overwrite = true});
  out.write(side);
  out.close();
}

}  // namespace framelift::server
