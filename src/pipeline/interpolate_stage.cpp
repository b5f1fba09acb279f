// `interpolate`: frame interpolation with RIFE or IFRNet to a new frame rate (factor=N or fps=F).
//
// Retiming works on timestamps, not frame indices: output frame k is the picture at time
// t0 + k / rate, made from the two input frames around that time with RIFE's timestep set to
// where it falls between them. So variable frame rate input is retimed correctly, any rate can
// become any other, and the output lasts as long as the input (the last input frame is held for
// its own duration), which keeps the copied audio in sync.
//
// Scene cuts (thumbnail difference above `scene`) are never morphed across: the frame before the
// cut is held until the cut. With `dedup`, input frames that repeat the previous one (static
// shots, telecine pulldown) are not used as anchors, so motion is spread over the real changes.
#include <ATen/ATen.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

extern "C" {
#include <libavutil/mathematics.h>
}

#include "infer/device.h"
#include "models/frame_interpolator.h"
#include "models/graphed_interpolator.h"
#include "pipeline/scene_change.h"
#include "pipeline/model_run_options.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "util/profiler.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

struct Anchor {
  at::Tensor image;      // [3, H, W] float CPU
  at::Tensor thumbnail;  // for cut and duplicate detection
  int64_t pts = 0;       // input time base
};

class InterpolateStage : public Stage {
 public:
  explicit InterpolateStage(const OptionValues& o)
      : model_name_(o.text("model")),
        scene_(o.number("scene")),
        dedup_(o.number("dedup")),
        scale_(o.number("scale")),
        ensemble_(o.flag("ensemble")),
        recursive_(o.flag("recursive")) {
    if (o.given("factor") && o.given("fps"))
      throw Error(ErrorKind::Usage, "stage interpolate: give either factor=N or fps=F, not both");
    if (o.given("fps")) fps_ = o.rate("fps");
    else factor_ = o.number("factor");
    model_ = models::open_interpolator(model_name_);
    // The precisions the network's own declaration holds (an ncnn RIFE export is RIFE's network).
    const std::string& arch = model_->info().arch;
    target_ = resolve_stage_target("interpolate", o, arch == "rife-ncnn" ? "rife" : arch);
    infer::prepare_device(target_);
    model_->to(target_.device, target_.dtype);
    if (o.flag("cuda_graphs")) model_ = models::wrap_in_cuda_graphs(std::move(model_), target_.device);
  }

  std::string name() const override { return "interpolate"; }
  // The neighbour to blend with, plus one: an output timestamp rounded to its time base can fall
  // a tick before the input frame it follows, and so belong to the segment before, which must
  // then hold that pair too. With dedup, enough to see past a short run of repeats (a longer run
  // across a segment boundary can pick another anchor: see docs/jobs.md).
  int context_frames() const override { return dedup_ > 0 ? 8 : 2; }
  c10::Device device() const override { return target_.device; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    in_tb_ = in.time_base;
    in_rate_ = in.frame_rate;
    origin_known_ = in.start_pts != AV_NOPTS_VALUE;
    if (origin_known_) first_pts_ = in.start_pts;
    if (fps_.num == 0) {
      if (in.frame_rate.num <= 0)
        throw Error(ErrorKind::Input, "stage interpolate: the input has no known frame rate; give fps=F instead of factor");
      fps_ = av_mul_q(in.frame_rate, AVRational{int(factor_), 1});
    }
    media::VideoFormat out = in;
    out.frame_rate = fps_;
    out.time_base = av_inv_q(fps_);
    out_tb_ = out.time_base;
    if (origin_known_) out.start_pts = av_rescale_q(first_pts_, in_tb_, out_tb_);
    log::info("interpolate: ", model_name_, " (", model_->info().arch, " ", model_->info().version, ") ",
              in.frame_rate.num > 0 ? str(av_q2d(in.frame_rate)) : std::string("variable"), " -> ", av_q2d(fps_),
              " fps on ", target_.describe_with_reason(), scene_ > 0 ? str(", scene cuts above ", scene_) : std::string());
    return out;
  }

  void reset() override {
    last_.reset();
    first_pts_ = next_k_ = last_seen_pts_ = 0;
    origin_known_ = false;
    last_interval_ = 0;
    cuts_ = duplicates_ = 0;
  }

  void push(Frame frame, const Emit& emit) override {
    Anchor next{frame.image, scene_thumbnail(frame.image), frame.pts};
    last_seen_pts_ = frame.pts;
    if (!last_) {
      if (!origin_known_) first_pts_ = frame.pts;
      last_ = std::move(next);
      skip_grid_before(last_->pts);
      return;
    }
    const double difference = thumbnail_difference(last_->thumbnail, next.thumbnail);
    if (dedup_ > 0 && difference < dedup_) {
      ++duplicates_;
      return;  // a repeat: the next real change becomes the other anchor
    }
    const bool cut = scene_ > 0 && difference > scene_;
    if (cut) ++cuts_;
    last_interval_ = seconds(next.pts) - seconds(last_->pts);
    if (recursive_ && !cut) {
      const std::vector<at::Tensor> frames = recursive_frames(last_->image, next.image, times_until(seconds(next.pts), slack()));
      size_t i = 0;
      emit_until(seconds(next.pts), slack(), [&](double) { return frames[i++]; }, emit);
    } else {
      emit_until(seconds(next.pts), slack(), [&](double t) { return cut ? last_->image : between(last_->image, next.image, t); },
                 emit);
    }
    last_ = std::move(next);
  }

  void flush(const Emit& emit) override {
    if (!last_) return;
    // The last frame is held for one input frame duration (nominal, or the last interval seen).
    const long double duration = in_rate_.num > 0 ? (long double)in_rate_.den / in_rate_.num : last_interval_;
    // A constant-rate clip's last timestamp, rounded by the container, snaps back to its frame slot.
    // (The last frame seen: a skipped repeat at the end still counts for the duration.)
    long double last_time = seconds(last_seen_pts_);
    if (in_rate_.num > 0) {
      const long double slot = std::round(last_time / duration) * duration;
      if (std::abs(slot - last_time) <= 0.5L * in_tb_.num / in_tb_.den) last_time = slot;
    }
    // At least one output frame, so a one-frame input of unknown rate still gives a picture.
    // The end is computed, not a rounded timestamp: no slack beyond floating point.
    emit_until(last_time + std::max(duration, (long double)fps_.den / fps_.num), 1e-9L,
               [&](double) { return last_->image; }, emit);
    if (cuts_ || duplicates_) log::info("interpolate: ", cuts_, " scene cut(s) held, ", duplicates_, " duplicate frame(s) skipped");
  }

 private:
  // Seconds since the first frame. long double: 64 bits of mantissa keep k / rate exact enough for
  // days of video, and the comparisons below have half an input tick of slack anyway.
  long double seconds(int64_t pts) const { return (long double)(pts - first_pts_) * in_tb_.num / in_tb_.den; }

  // How close to an input frame an output time must be to count as that frame: half an input
  // tick covers the container's rounding (Matroska: 1 ms); a time base as coarse as the frame
  // rate (AVI, raw streams, 1/25 from a library caller) has no rounding to cover, and half its
  // tick would swallow the interpolated frames themselves, so never more than a quarter of an
  // output interval.
  long double slack() const {
    return std::min(0.5L * in_tb_.num / in_tb_.den, 0.25L * fps_.den / fps_.num);
  }

  // Emits every output frame whose time is before `end` - `slack` (seconds), from the current
  // anchor on. Containers round timestamps (Matroska to 1 ms), so between input frames an output
  // time within half an input tick of the next frame counts as that frame, not an interpolation.
  template <class Picture>
  void emit_until(long double end, long double slack, Picture picture, const Emit& emit) {
    for (; time_of(next_k_) < end - slack; ++next_k_)
      emit(Frame{picture(position(time_of(next_k_), end)), av_rescale_q(first_pts_, in_tb_, out_tb_) + next_k_});
  }

  // The positions t in [0, 1] between the anchor and the frame at `end` that emit_until will ask for.
  std::vector<double> times_until(long double end, long double slack) const {
    std::vector<double> out;
    for (int64_t k = next_k_; time_of(k) < end - slack; ++k) out.push_back(position(time_of(k), end));
    return out;
  }

  long double time_of(int64_t k) const { return (long double)k * fps_.den / fps_.num; }
  double position(long double time, long double end) const {
    const long double from = seconds(last_->pts);
    return std::clamp(double((time - from) / std::max(end - from, 1e-9L)), 0.0, 1.0);
  }

  // recursive=1: the frames at `times` as FILM's tools make them. Each comes from the two nearest
  // frames known so far (the anchors, then the frames made), the one whose place between them is
  // nearest 0.5 first; a power-of-two factor is then exactly repeated midpoints (t = 0.5 every
  // time), the only timestep FILM was trained on. Frames are fed back clamped, as upstream does.
  std::vector<at::Tensor> recursive_frames(const at::Tensor& a, const at::Tensor& b, const std::vector<double>& times) {
    std::map<double, at::Tensor> known = {{0.0, a}, {1.0, b}};
    std::set<double> wanted;
    for (double t : times)
      if (t > 1e-6) wanted.insert(t);
    while (!wanted.empty()) {
      double best = 0, best_place = 0, best_lo = 0, best_hi = 1;
      double distance = 2;
      for (double t : wanted) {
        const auto hi = known.upper_bound(t), lo = std::prev(hi);
        const double place = (t - lo->first) / (hi->first - lo->first);
        if (std::abs(place - 0.5) < distance - 1e-9) {  // a tie (1/3 and 2/3) goes to the earlier, as upstream's does
          distance = std::abs(place - 0.5);
          std::tie(best, best_place, best_lo, best_hi) = std::tuple(t, place, lo->first, hi->first);
        }
      }
      known[best] = between(known.at(best_lo), known.at(best_hi), best_place);
      wanted.erase(best);
    }
    std::vector<at::Tensor> out;
    for (double t : times) out.push_back(t > 1e-6 ? known.at(t) : a);
    return out;
  }

  // A stretch that starts mid-video (a job's segment) begins at the first grid point that one
  // uninterrupted run would emit after this frame became the anchor: the same comparison as
  // emit_until's, so the two agree to the last bit.
  void skip_grid_before(int64_t pts) {
    const long double end = seconds(pts) - slack();
    next_k_ = std::max<int64_t>(0, int64_t(std::floor(end * fps_.num / fps_.den)) - 2);
    while ((long double)next_k_ * fps_.den / fps_.num < end) ++next_k_;
  }

  at::Tensor between(const at::Tensor& a, const at::Tensor& b, double t) {
    if (t <= 1e-6) return a;
    at::InferenceMode guard;
    at::Tensor x, y, out;
    {
      Section upload("upload");
      x = infer::to_target(a.unsqueeze(0), target_);
      y = infer::to_target(b.unsqueeze(0), target_);
      if (profiling()) infer::synchronize_device(y.device());
    }
    {
      Section inference("inference", true);
      // Pixels as the network sees them: padded to its multiple (at flow scale 1).
      const double m = std::max(1, model_->info().size_multiple);
      inference.add_work(std::ceil(a.size(-1) / m) * m * std::ceil(a.size(-2) / m) * m * (ensemble_ ? 2 : 1));
      out = model_->interpolate(x, y, t, scale_);
      // Ensemble: the swapped pair at 1 - t, averaged, cancels some of the flow's asymmetric errors.
      if (ensemble_) out = (out + model_->interpolate(y, x, 1.0 - t, scale_)) * 0.5;
      if (profiling()) infer::synchronize_device(out.device());
    }
    Section download("download");  // to float32, on the device (see Stage::device)
    return out.squeeze(0).to(at::kFloat).clamp_(0, 1);
  }

  std::string model_name_;
  double factor_ = 0;  // 0: fps_ is given
  double scene_, dedup_, scale_;
  bool ensemble_, recursive_;
  AVRational fps_{0, 1}, in_tb_{1, 25}, out_tb_{1, 25}, in_rate_{0, 1};
  infer::ExecutionTarget target_;
  std::unique_ptr<models::FrameInterpolator> model_;
  std::optional<Anchor> last_;
  int64_t first_pts_ = 0, next_k_ = 0, last_seen_pts_ = 0;
  bool origin_known_ = false;
  long double last_interval_ = 0;
  int64_t cuts_ = 0, duplicates_ = 0;
};

OptionSchema interpolate_options() {
  OptionSchema run = model_run_options();
  std::erase_if(run, [](const OptionSpec& s) { return s.name != "device" && s.name != "precision" && s.name != "threads"; });
  return combine({with_role(text_option("model", "rife-v4.6", "a catalog name or a file"), OptionRole::ModelRef),
                  integer_option("factor", "2", 1, 16, "frames out per frame in; or fps="),
                  rate_option("fps", 1000, "output rate, e.g. 60, 59.94, 60000/1001"),
                  number_option("scene", "0.12", 0, 1, "cut threshold; 0 off"),
                  number_option("dedup", "0", 0, 1, "skip repeats below this difference; 0 off"),
                  number_option("scale", "1", 0, 4, "flow scale, 0.5 for 4K; native weights", /*min_exclusive=*/true),
                  flag_option("ensemble", "0", ""),
                  flag_option("recursive", "0", "each frame from the nearest two made so far, nearest t = 0.5 first (FILM's way)"),
                  flag_option("cuda_graphs", "0", "CUDA: replay recorded kernel launches; unmeasured")},
                 run);
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(interpolate, "Frame interpolation (RIFE, IFRNet, FILM, GMFSS) to a higher or any frame rate",
                         interpolate_options(),
                         [](const OptionValues& o) { return std::make_unique<InterpolateStage>(o); });

}  // namespace framelift::pipeline
