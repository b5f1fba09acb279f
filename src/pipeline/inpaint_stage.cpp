// `inpaint`: object removal with an inpainting network (LaMa, models/lama.cpp; MAT, models/mat.cpp),
// where a mask (pipeline/frame_mask.h: an image, a moving mask video, a box) says. Per frame:
//   1. the mask, grown by dilate= pixels (a logo's soft edge is part of the logo);
//   2. the region around it: the mask's bounding box with as much context again on each side
//      (half its longer side, at least 16 px), inside the frame;
//   3. that region at the network's working size: scaled down (antialiased) so its longer side is
//      at most resolution= (LaMa was trained on 256 px crops and fills large frames with smeared
//      texture), padded by reflection to the network's multiple; the mask scaled with it, a
//      pixel any part of the hole touches counting as hole. MAT takes one size only (512 for the
//      releases): the region is scaled up or down so its longer side is that, and padded to it;
//   4. the fill scaled back up (bicubic) and written into the frame only where the full-size mask
//      is: every other pixel is the input's, bit for bit.
// A frame whose mask is empty passes untouched. Whole regions only: the Fourier convolutions see
// the whole region, so tiles would change the fill.
#include <ATen/ATen.h>

#include <algorithm>
#include <optional>

#include "infer/device.h"
#include "pipeline/frame_mask.h"
#include "pipeline/model_run_options.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

struct Region {
  int64_t x = 0, y = 0, width = 0, height = 0;
};

// The bounding box of mask > 0.5 ([H, W]), grown by context and clipped; nullopt when empty.
std::optional<Region> region_around(const at::Tensor& mask) {
  const at::Tensor rows = mask.gt(0.5).any(1).nonzero(), cols = mask.gt(0.5).any(0).nonzero();
  if (rows.numel() == 0) return std::nullopt;
  const int64_t h = mask.size(0), w = mask.size(1);
  const int64_t y0 = rows.min().item<int64_t>(), y1 = rows.max().item<int64_t>() + 1;
  const int64_t x0 = cols.min().item<int64_t>(), x1 = cols.max().item<int64_t>() + 1;
  const int64_t context = std::max<int64_t>(16, std::max(y1 - y0, x1 - x0) / 2);
  Region r;
  r.x = std::max<int64_t>(0, x0 - context);
  r.y = std::max<int64_t>(0, y0 - context);
  r.width = std::min(w, x1 + context) - r.x;
  r.height = std::min(h, y1 + context) - r.y;
  return r;
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

class InpaintStage : public Stage {
 public:
  explicit InpaintStage(const OptionValues& o)
      : file_(o.has("model") ? o.text("model") : ""), dilate_(o.integer("dilate")), resolution_(o.integer("resolution")) {
    if (file_.empty()) throw Error(ErrorKind::Usage, "stage inpaint: model=FILE (a LaMa .pth or .ckpt, or a MAT .pth) is required");
    if (!o.has("mask") && !o.has("box")) throw Error(ErrorKind::Usage, "stage inpaint: mask=IMAGE|VIDEO or box=x,y,w,h says what to remove");
    std::optional<MaskBox> box;
    if (o.has("box")) box = parse_mask_box(o.text("box"));
    model_ = open_stage_model("inpaint", o, std::vector<std::string>{"lama", "mat"}, "a LaMa .pth or .ckpt, or a MAT .pth",
                              "an inpainting one (LaMa, MAT)");
    fixed_ = model_->info().arch == "mat";
    if (fixed_ && o.given("resolution"))
      throw Error(ErrorKind::Usage, str("stage inpaint: resolution= is LaMa's; ", file_, " is a MAT network, which fills at its own ",
                                        model_->info().size_multiple, "x", model_->info().size_multiple));
    mask_.emplace(o.has("mask") ? o.text("mask") : "", box);
    target_ = resolve_stage_target("inpaint", o, model_->info().arch);
    infer::prepare_device(target_);
    model_->to(target_.device, target_.dtype);
  }

  std::string name() const override { return "inpaint"; }
  c10::Device device() const override { return target_.device; }

  media::VideoFormat configure(const media::VideoFormat& in) override {
    time_base_ = in.time_base;
    start_pts_ = in.start_pts;
    const int64_t m = model_->info().size_multiple;
    log::info("inpaint: ", file_, " (", model_->info().arch, ") ", in.width, "x", in.height,
              fixed_ ? str(", regions scaled to ", m, "x", m) : str(", regions at most ", resolution_, " px"), ", mask grown by ", dilate_,
              " px, on ", target_.describe_with_reason());
    return in;
  }

  void push(Frame frame, const Emit& emit) override {
    if (start_pts_ == AV_NOPTS_VALUE) start_pts_ = frame.pts;
    const double seconds = double(frame.pts - start_pts_) * time_base_.num / time_base_.den;
    const int64_t h = frame.image.size(1), w = frame.image.size(2);
    at::Tensor mask = mask_->mask_for(seconds, h, w);  // [1, 1, H, W] on the CPU, 0 or 1
    if (dilate_ > 0) mask = at::max_pool2d(mask, {2 * dilate_ + 1, 2 * dilate_ + 1}, {1, 1}, {dilate_, dilate_});
    const std::optional<Region> region = region_around(mask[0][0]);
    if (region) frame.image = filled(frame.image, mask.to(frame.image.device()), *region);
    emit(std::move(frame));
  }

  void reset() override { start_pts_ = AV_NOPTS_VALUE; }

 private:
  at::Tensor filled(const at::Tensor& image, const at::Tensor& mask, const Region& r) {
    at::InferenceMode guard;
    const at::Tensor crop = image.narrow(1, r.y, r.height).narrow(2, r.x, r.width).unsqueeze(0);
    const at::Tensor hole = mask.narrow(2, r.y, r.height).narrow(3, r.x, r.width);
    // MAT fills exactly its resolution: the region scaled (up or down) to it along its longer
    // side; LaMa at most resolution=.
    const int64_t m = model_->info().size_multiple;
    const double longer = double(std::max(r.width, r.height));
    const double factor = fixed_ ? double(m) / longer : std::min(1.0, double(resolution_) / longer);
    const int64_t wh = std::max<int64_t>(1, std::lround(r.height * factor)), ww = std::max<int64_t>(1, std::lround(r.width * factor));
    at::Tensor small = crop, small_hole = hole;
    if (wh != r.height || ww != r.width) {
      small = at::_upsample_bilinear2d_aa(crop, {wh, ww}, false);
      small_hole = at::_upsample_bilinear2d_aa(hole, {wh, ww}, false).gt(1e-3).to(crop.scalar_type());
    }
    // Reflection padding to the network's multiple (reflect needs the pad below the size: a
    // region of a few pixels is replicated instead). The padding is not hole: MAT, whose
    // multiple is its whole size, sees it as known picture around the region.
    const int64_t ph = round_up(wh, m) - wh, pw = round_up(ww, m) - ww;
    at::Tensor input = at::cat({small, small_hole}, 1);
    if (ph || pw)
      input = ph < wh && pw < ww ? at::reflection_pad2d(input, {0, pw, 0, ph}) : at::replication_pad2d(input, {0, pw, 0, ph});
    at::Tensor fill = model_->forward(input.to(target_.dtype)).to(at::kFloat).narrow(2, 0, wh).narrow(3, 0, ww);
    if (wh > r.height || ww > r.width)  // MAT's size, above a small region's: antialiased down
      fill = at::_upsample_bicubic2d_aa(fill, {r.height, r.width}, false).clamp(0, 1);
    else if (wh != r.height || ww != r.width)
      fill = at::upsample_bicubic2d(fill, {r.height, r.width}, false).clamp(0, 1);
    at::Tensor out = image.clone();
    at::Tensor target = out.narrow(1, r.y, r.height).narrow(2, r.x, r.width);
    target.copy_(at::where(hole[0].gt(0.5), fill[0], target));
    return out;
  }

  std::string file_;
  int64_t dilate_, resolution_;
  bool fixed_ = false;  // MAT: one size
  std::unique_ptr<models::ImageModel> model_;
  std::optional<FrameMask> mask_;
  infer::ExecutionTarget target_;
  AVRational time_base_{1, 25};
  int64_t start_pts_ = AV_NOPTS_VALUE;
};

OptionSchema inpaint_options() {
  return combine({with_role(text_option("model", "", "a LaMa .pth or .ckpt (big-lama) or a MAT .pth: installed name or file; required"),
                            OptionRole::ModelRef),
                  with_role(text_option("mask", "", "IMAGE|VIDEO; white is removed"), OptionRole::File),
                  text_option("box", "", "x,y,w,h; removed as well"),
                  integer_option("dilate", "0", 0, 256, "grow the mask by N px (soft edges of a logo)"),
                  integer_option("resolution", "512", 64, 4096, "LaMa: longest side it fills at; larger regions are scaled down for it")},
                 model_device_options());
}

}  // namespace

FRAMELIFT_REGISTER_STAGE(inpaint, "Object removal with an inpainting network (LaMa, MAT) where mask= or box= says",
                         inpaint_options(), [](const OptionValues& o) { return std::make_unique<InpaintStage>(o); });

}  // namespace framelift::pipeline
