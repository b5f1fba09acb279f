// `resize`: a classical resize through swscale on the float frames (lanczos by default). It is the
// stage that exercises the whole path before any AI stage, and the final step that brings an AI
// model's native scale to the scale the user asked for.
#include <ATen/ATen.h>

extern "C" {
#include <libavutil/rational.h>
#include <libswscale/swscale.h>
}

#include <climits>
#include <cmath>

#include "media/av_ptr.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

int sws_algorithm(const std::string& name) {
  if (name == "lanczos") return SWS_LANCZOS;
  if (name == "bicubic") return SWS_BICUBIC;
  if (name == "bilinear") return SWS_BILINEAR;
  if (name == "spline") return SWS_SPLINE;
  if (name == "neighbor" || name == "nearest") return SWS_POINT;
  if (name == "area") return SWS_AREA;
  throw Error(ErrorKind::Usage, str("stage resize: unknown algo '", name, "' (lanczos, bicubic, bilinear, spline, nearest, area)"));
}

// Even sizes keep 4:2:0 and 4:2:2 encoders happy.
int even(double v) { return std::max(2, int(std::lround(v / 2.0)) * 2); }

class ResizeStage : public Stage {
 public:
  // 0 for scale, w and h: not given (the schema has no default for them).
  explicit ResizeStage(const OptionValues& o)
      : scale_(o.has("scale") ? o.number("scale") : 0),
        width_(o.has("w") ? int(o.integer("w")) : 0),
        height_(o.has("h") ? int(o.integer("h")) : 0),
        flags_(sws_algorithm(o.text("algo")) | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT) {
    if (scale_ == 0 && width_ == 0 && height_ == 0)
      throw Error(ErrorKind::Usage, "stage resize: give scale=F, or w= and/or h=");
  }

  std::string name() const override { return "resize"; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    media::VideoFormat out = in;
    if (scale_ > 0) {
      // A scale that leaves less than a 2x2 picture (1e-9) or more than w=/h= allow would be
      // clamped into a picture nobody asked for: refused, naming the sizes.
      const double w = in.width * scale_, h = in.height * scale_;
      if (w < 2 || h < 2 || w > 16384 || h > 16384)
        throw Error(ErrorKind::Usage, str("stage resize: scale=", scale_, " makes ", in.width, "x", in.height, " into ",
                                          w, "x", h, "; the output must be 2x2 to 16384x16384"));
      out.width = even(in.width * scale_);
      out.height = even(in.height * scale_);
    } else {
      double aspect = double(in.width) / in.height;
      out.width = width_ ? width_ : even(height_ * aspect);
      out.height = height_ ? height_ : even(width_ / aspect);
    }
    out.sample_aspect = aspect_keeping_display(in, out);
    // The same size is a no-op; swscale's unscaled float copy (FFmpeg 5.1) also copies only a
    // quarter of each row (its width in bytes, not in floats).
    identity_ = out.width == in.width && out.height == in.height;
    if (identity_) return out;
    sws_.reset(sws_getContext(in.width, in.height, AV_PIX_FMT_GBRPF32, out.width, out.height,
                              AV_PIX_FMT_GBRPF32, flags_, nullptr, nullptr, nullptr));
    if (!sws_) throw Error(ErrorKind::Usage, str("stage resize: cannot resize to ", out.width, "x", out.height));
    in_w_ = in.width;
    in_h_ = in.height;
    out_w_ = out.width;
    out_h_ = out.height;
    return out;
  }

  void push(Frame frame, const Emit& emit) override {
    if (identity_) return emit(std::move(frame));
    at::Tensor src = frame.image.to(at::kCPU).contiguous();
    at::Tensor dst = at::empty({3, out_h_, out_w_}, at::kFloat);
    // Channel order does not matter to a per-plane resize: pass planes in the same order.
    const uint8_t* in[4] = {plane(src, 0), plane(src, 1), plane(src, 2), nullptr};
    uint8_t* out[4] = {plane(dst, 0), plane(dst, 1), plane(dst, 2), nullptr};
    int in_stride[4] = {int(in_w_ * sizeof(float)), int(in_w_ * sizeof(float)), int(in_w_ * sizeof(float)), 0};
    int out_stride[4] = {int(out_w_ * sizeof(float)), int(out_w_ * sizeof(float)), int(out_w_ * sizeof(float)), 0};
    sws_scale(sws_.get(), in, in_stride, 0, in_h_, out, out_stride);
    frame.image = dst;
    emit(std::move(frame));
  }

 private:
  // An anamorphic picture stays as wide on screen as it was: w= and h= that change the storage
  // aspect change the pixel aspect the other way (as FFmpeg's scale filter does). Unknown stays unknown.
  static AVRational aspect_keeping_display(const media::VideoFormat& in, const media::VideoFormat& out) {
    if (in.sample_aspect.num <= 0 || in.sample_aspect.den <= 0) return in.sample_aspect;
    AVRational sar;
    av_reduce(&sar.num, &sar.den, int64_t(in.sample_aspect.num) * in.width * out.height,
              int64_t(in.sample_aspect.den) * out.width * in.height, INT_MAX);
    return sar;
  }

  static uint8_t* plane(const at::Tensor& t, int c) {
    return reinterpret_cast<uint8_t*>(t.data_ptr<float>() + c * t.size(1) * t.size(2));
  }

  double scale_;
  int width_, height_, flags_;
  int in_w_ = 0, in_h_ = 0, out_w_ = 0, out_h_ = 0;
  bool identity_ = false;
  media::SwsPtr sws_;
};

}  // namespace

FRAMELIFT_REGISTER_STAGE(resize, "Classical resize with swscale",
                         (OptionSchema{number_option("scale", "", 0, 16, "or w= and/or h=", /*min_exclusive=*/true),
                                       with_role(integer_option("w", "", 2, 16384, "output width"), OptionRole::FrameSize),
                                       with_role(integer_option("h", "", 2, 16384, "output height"), OptionRole::FrameSize),
                                       choice_option("algo", "lanczos",
                                                     {"lanczos", "bicubic", "bilinear", "spline", "nearest", "area"}, "")}),
                         [](const OptionValues& o) { return std::make_unique<ResizeStage>(o); });

}  // namespace framelift::pipeline
