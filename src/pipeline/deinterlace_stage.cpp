// `deinterlace`: field-aware deinterlacing with libavfilter's bwdif (default) or yadif.
// mode=frame gives one frame per interlaced frame; mode=field one per field, at twice the rate,
// each at the time its field was shot (the first at the frame's time, the second half way to the
// next frame's): output times are a pure function of input times, as jobs need.
//
// With parity=auto (the default) the stage deinterlaces only what the source says is interlaced:
// the decoder's frame flags, else the container's field order. Progressive or untagged input
// passes through untouched, so the stage is safe to leave in a pipeline for mixed sources.
//
// First in the pipeline, the stage filters the decoded frames (Stage::decoded_frame_graph): in
// 4:2:0 the chroma lines of the two fields are still apart there, and the conversion to RGB would
// blend them. Later in a chain it filters the RGB frames, which is exact for luma but has lost
// that chroma separation (measured: 1.9 dB less on real footage; docs/restoration.md).
#include "pipeline/graph_stage.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

std::string field_order_name(AVFieldOrder order) {
  switch (order) {
    case AV_FIELD_PROGRESSIVE: return "progressive";
    case AV_FIELD_TT: case AV_FIELD_BT: return "interlaced, top field first";
    case AV_FIELD_BB: case AV_FIELD_TB: return "interlaced, bottom field first";
    default: return "not tagged interlaced";
  }
}

class DeinterlaceStage : public GraphStage {
 public:
  explicit DeinterlaceStage(const OptionValues& o) : mode_(o.text("mode")), parity_(o.text("parity")), filter_(o.text("filter")) {}

  std::string name() const override { return "deinterlace"; }
  // bwdif and yadif read the previous and the next frame's fields.
  int context_frames() const override { return 1; }

 protected:
  std::string graph_description(const media::VideoFormat& in) override {
    std::string parity = parity_;
    if (parity == "auto") {
      if (!in.interlaced()) {
        log::info("deinterlace: input is ", field_order_name(in.field_order),
                  "; frames pass unchanged (parity=tff|bff forces deinterlacing)");
        return "";
      }
      parity = in.top_field_first() ? "tff" : "bff";
    }
    log::info("deinterlace: ", filter_, ", ", parity, ", one frame per ", mode_,
              parity_ == "auto" ? str(" (input is ", field_order_name(in.field_order), ")") : std::string());
    // deint=all: the stage has decided; the frames it sends carry no interlace flags of their own.
    return str(filter_, "=mode=", mode_ == "field" ? "send_field" : "send_frame", ":parity=", parity, ":deint=all");
  }

  bool wants_decoded_frames() const override { return true; }

  media::VideoFormat adjust_output(media::VideoFormat out) override {
    out.field_order = AV_FIELD_PROGRESSIVE;
    return out;
  }

 private:
  std::string mode_, parity_, filter_;
};

}  // namespace

FRAMELIFT_REGISTER_STAGE(deinterlace, "Field-aware deinterlacing (bwdif or yadif); progressive input passes unchanged",
                         (OptionSchema{choice_option("mode", "frame", {"frame", "field"},
                                                     "field: one frame per field, double rate"),
                                       choice_option("parity", "auto", {"auto", "tff", "bff"},
                                                     "auto: from the stream; progressive or untagged input is left alone"),
                                       choice_option("filter", "bwdif", {"bwdif", "yadif"}, "")}),
                         [](const OptionValues& o) { return std::make_unique<DeinterlaceStage>(o); });

}  // namespace framelift::pipeline
