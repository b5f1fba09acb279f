// `filter`: any libavfilter graph between stages, the escape hatch for what framelift has no stage
// for (crop, color, sharpen, scale, classical denoise). Quote a graph that holds commas or colons:
// filter:graph='crop=iw-8:ih-8,unsharp' or filter:graph=[crop=iw-8:ih-8,unsharp] (stage_spec.h).
//
// The graph sees the pipeline's float RGB frames with their timestamps, time base and frame rate,
// and may change the size, aspect or rate: later stages and the encoder get what it reports.
#include "media/filter_graph_scope.h"
#include "pipeline/graph_stage.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"

namespace framelift::pipeline {
namespace {

class FilterStage : public GraphStage {
 public:
  explicit FilterStage(const OptionValues& o) : graph_(o.has("graph") ? o.text("graph") : ""), context_(int(o.integer("context"))) {
    if (graph_.empty())
      throw Error(ErrorKind::Usage, "stage filter: give graph=FILTERS, e.g. filter:graph='crop=iw-8:ih-8,unsharp'");
  }

  std::string name() const override { return "filter"; }
  // A temporal graph (hqdn3d's temporal part, tmix, deflicker) looks at neighbours the job's
  // segment boundaries would hide; the user says how many, since framelift cannot know.
  int context_frames() const override { return context_; }

 protected:
  std::string graph_description(const media::VideoFormat&) override { return graph_; }

 private:
  std::string graph_;
  int context_;
};

}  // namespace

FRAMELIFT_REGISTER_STAGE(filter, "Any libavfilter graph (crop, color, sharpen, scale, denoise, ...)",
                         (OptionSchema{with_role(text_option("graph", "", "required; quote commas and colons: "
                                                                          "graph='crop=iw-8:ih-8,unsharp' or graph=[...]"),
                                                              OptionRole::FilterGraph),
                                       integer_option("context", "0", 0, 64,
                                                      "neighbour frames a temporal graph needs at job segment boundaries")}),
                         [](const OptionValues& o) { return std::make_unique<FilterStage>(o); },
                         [](const OptionValues& o) { return o.has("graph") ? media::whole_video_reason(o.text("graph")) : ""; });

}  // namespace framelift::pipeline
