#pragma once
// A chain of stages (resize, upscale, interpolate, denoise, deinterlace, filter, model) built
// once and fed frames from memory: what `framelift run` runs between decoding and encoding, for
// programs that bring their own frames (a GUI, a server, a VapourSynth-style host).
//
// Usage:
//
//   framelift::Pipeline p("upscale:model=realesr-animevideov3-x2,interpolate:factor=2");
//   framelift::VideoShape out = p.configure({.width = 640, .height = 360});
//   for (each input frame f) {
//     p.send(std::move(f));
//     while (auto g = p.receive()) use(*g);   // out.width x out.height
//   }
//   p.flush();
//   while (auto g = p.receive()) use(*g);
//   p.reset();  // then configure() again for another clip; the weights stay loaded
//
// Errors: every function throws framelift::Error (include/framelift/error.h): Usage for bad text
// or options (refused before any weights load), Model for weights that cannot be used, Resource
// for memory, Input for frames that do not match the configured shape.
// A moved-from Pipeline may be destroyed or assigned a new one; every other function throws
// Error(Usage, "framelift::Pipeline: used after being moved from").
//
// Thread-safety: a Pipeline is used from one thread at a time (it may move between threads).
// Separate Pipelines are independent, except that CPU inference shares the process's thread pool.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framelift/frame.h"
#include "framelift/policy.h"

namespace framelift {

// One stage of the text form "NAME:KEY=VALUE:...": what parse_pipeline gives and Pipeline takes.
struct StageSpec {
  std::string name;
  std::map<std::string, std::string> options;
};

// The one parser of the --pipeline text (quoting: KEY='a,b:c' or KEY=[...]). Throws Error(Usage).
std::vector<StageSpec> parse_pipeline(const std::string& text);

// What each stage accepts, from its declared option schema (what `framelift stages` prints).
struct StageOptionInfo {
  std::string name;
  std::string kind;           // "integer", "number", "flag", "choice", "rate", "size", "text"
  std::string default_value;  // "" when it depends on other options
  std::string allowed;        // "1 <= N <= 16", "frame|field", ...
  std::string help;
  // "model" (a catalog name, an installed model or a model file) or "file" (a path the stage
  // opens: a module, a mask) when the value names something on disk; "" for every other option.
  // A server checks such values against the folders it allows (docs/server.md).
  std::string opens;
};
struct StageInfo {
  std::string name, summary;
  std::vector<StageOptionInfo> options;
  std::string usage;  // every option on one line, as `framelift stages` prints it
};
std::vector<StageInfo> list_stages();

// The properties of the frames a Pipeline gets or gives.
enum class FieldOrder { Unknown, Progressive, TopFirst, BottomFirst };
struct VideoShape {
  int width = 0, height = 0;
  int frame_rate_num = 0, frame_rate_den = 1;  // 0/1: unknown or variable (interpolate then needs fps=)
  int time_base_num = 1, time_base_den = 1000;  // the unit of Frame::pts (any; 1/1000 or the container's)
  int64_t start_pts = 0;                        // the first frame's pts (retiming stages lay their grid from it)
  FieldOrder field_order = FieldOrder::Unknown;
  // The pixels' aspect (16/11 for an anamorphic PAL picture); 0/1: unknown, taken as square.
  // A Source reports its file's; resize stages that change the proportions change it so that the
  // display aspect stays; a Sink writes it.
  int sample_aspect_num = 0, sample_aspect_den = 1;
};

// What a built stage reports about itself.
struct StageReport {
  std::string name;
  std::map<std::string, std::string> options;  // as given (defaults not filled in)
  int context_frames = 0;  // neighbours it needs on each side of a stretch to match one pass
  std::string device;      // "cpu", "cuda:0"
  // The planner's cost model of the network the stage runs (what `framelift plan` prices);
  // priced false for stages without one (a filter graph, deinterlacing, a TorchScript module)
  // and for resize. Per input pixel of one network call; RIFE: per new frame.
  bool priced = false;
  double flops_per_pixel = 0;
  double activation_bytes_per_pixel = 0;  // live activations at the worst point, in fp32
  double parameters = 0;                  // weights and biases
};

class Pipeline {
 public:
  // Builds every stage: validates each option against the stage's schema, loads weights, opens
  // devices. `defaults` fill options a stage's text leaves out, as the CLI's --device,
  // --precision, --tile, ... do ({"device", "cpu"}, {"precision", "bf16"}, {"tile", "256"}).
  explicit Pipeline(const std::string& text, const std::map<std::string, std::string>& defaults = {});
  Pipeline(const std::vector<StageSpec>& stages, const std::map<std::string, std::string>& defaults = {});
  // The same, for text the caller did not write: every stage is first held to `policy`
  // (framelift/policy.h), before any weights load or filter is created; Error(Usage) if refused.
  Pipeline(const std::string& text, const std::map<std::string, std::string>& defaults, const PipelinePolicy& policy);
  Pipeline(const std::vector<StageSpec>& stages, const std::map<std::string, std::string>& defaults,
           const PipelinePolicy& policy);
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Before the first frame (and after reset()): the input's shape; returns the output's.
  VideoShape configure(const VideoShape& input);
  // The next input frame, in presentation order, of the configured size. Output frames it
  // completes become available to receive(). An empty pipeline passes frames through.
  void send(Frame frame);
  // The next output frame, or nullopt when none is ready yet.
  std::optional<Frame> receive();
  // End of the input: every remaining output frame becomes available to receive().
  void flush();
  // Forgets the clip (held frames, timestamps); keeps weights and plans. configure() again next.
  void reset();

  std::vector<StageReport> stages() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace framelift
