#include "plan/calibration.h"

#include <fstream>

#include "util/error.h"
#include "util/str.h"

using nlohmann::json;

namespace framelift::plan {
namespace {

// Shipped defaults, before any profile: the share of peak that PyTorch convolution networks
// typically reach (docs/planner.md). Small-channel and stride-2 layers use tensor cores poorly,
// so fp16 efficiency is lower than fp32's; CPUs lose most to memory traffic.
constexpr double kTensorEfficiency = 0.35;
constexpr double kFp32Efficiency = 0.55;
constexpr double kCpuEfficiency = 0.25;
// The CUDA caching allocator rounds blocks up and keeps freed ones: measured peaks run above the
// sum of live tensors.
constexpr double kMemoryFactor = 1.25;

double peak_tflops(const Device& d, const std::string& precision) {
  if (precision == "fp32") return d.fp32_tflops;
  return precision == "bf16" ? d.bf16_tensor_tflops : d.fp16_tensor_tflops;
}

double number(const json& e, const char* key, const std::string& where) {
  if (!e.contains(key) || !e[key].is_number() || e[key].get<double>() <= 0)
    throw Error(ErrorKind::Input, str(where, ": '", key, "' is missing or not a positive number"));
  return e[key].get<double>();
}

double stage_seconds(const json& st) {
  double s = 0;
  for (const char* key : {"own_s", "upload_s", "inference_s", "download_s"}) s += st.value(key, 0.0);
  return s;
}

}  // namespace

Calibration::Calibration() {
  // Real-CUGAN's unpadded 3-channel convolutions at the output size and waifu2x's 16-32 channel
  // first layers keep tensor cores idle more than the 64-channel bodies do.
  efficiency_[{"", "realcugan"}] = 0.25;
  efficiency_[{"", "waifu2x_cunet"}] = 0.25;
  efficiency_[{"", "waifu2x_upconv7"}] = 0.25;
  // RIFE runs many small layers at 1/8-1/2 size: launch-bound on fast GPUs.
  efficiency_[{"", "rife"}] = 0.15;
  // IFRNet's decoders are alike (48-432 channels at 1/16-1/2 size): RIFE's figure, not measured.
  efficiency_[{"", "ifrnet"}] = 0.15;
}

double Calibration::compute_efficiency(const Device& d, const std::string& arch, const std::string& precision) const {
  if (auto it = efficiency_.find({d.id, arch}); it != efficiency_.end()) return it->second;
  double base = d.cpu ? kCpuEfficiency : precision == "fp32" ? kFp32Efficiency : kTensorEfficiency;
  if (auto it = efficiency_.find({"", arch}); it != efficiency_.end() && !d.cpu)
    base = precision == "fp32" ? it->second * kFp32Efficiency / kTensorEfficiency : it->second;
  return base;
}

double Calibration::memory_factor(const Device& d, const std::string& arch) const {
  if (auto it = memory_.find({d.id, arch}); it != memory_.end()) return it->second;
  if (auto it = memory_.find({"", arch}); it != memory_.end()) return it->second;
  return kMemoryFactor;
}

std::optional<double> Calibration::measured_stage_s_per_px(const Device& d, const std::string& pipeline, size_t index) const {
  if (auto it = stages_.find({d.id, pipeline, index}); it != stages_.end()) return it->second;
  return std::nullopt;
}

double Calibration::encoder_mpx_per_thread(const std::string& codec, const std::string& preset) const {
  if (auto it = encoders_.find({codec, preset}); it != encoders_.end()) return it->second;
  return 0;
}

std::optional<MeasuredVideoBits> Calibration::video_bits(const std::string& codec) const {
  if (auto it = video_bits_.find(codec); it != video_bits_.end()) return it->second;
  return std::nullopt;
}

void Calibration::add_manifest(const json& m, const std::string& name, const PlanCatalog& catalog) {
  if (!m.is_object() || m.value("kind", "") != "framelift-profile")
    throw Error(ErrorKind::Input, str(name, ": not a framelift profile manifest (kind must be \"framelift-profile\")"));
  if (!m.contains("device") || !m["device"].is_object() || !m["device"].contains("id"))
    throw Error(ErrorKind::Input, str(name, ": 'device.id' is missing"));
  const std::string id = m["device"]["id"].get<std::string>();
  const Device* d = id == "cpu" ? nullptr : catalog.device(id);
  const Device cpu = id == "cpu" ? local_cpu() : Device{};
  if (id == "cpu") d = &cpu;
  if (!d) throw Error(ErrorKind::Input, str(name, ": device '", id, "' is not in the catalog (add it with --catalog)"));
  const std::string precision = m.value("precision", "fp16");
  for (const json& r : m.value("runs", json::array())) {
    const std::string arch = r.value("arch", "");
    const std::string where = str(name, ": run ", arch.empty() ? "?" : arch);
    const arch::ArchCost cost = arch::cost(arch, r.value("scale", 1), r.value("params", arch::ArchParams{}));
    // input_pixels: what the calls' inputs held together (tiles differ at the frame's edges).
    const double px = r.contains("input_pixels") ? number(r, "input_pixels", where)
                                                 : number(r, "input_width", where) * number(r, "input_height", where) * r.value("batch", 1);
    const double seconds = number(r, "seconds", where);
    const double bytes = precision == "fp32" ? 4 : 2;
    // Take the memory-traffic time out first; what is left is compute at the unknown efficiency.
    const double memory_s = cost.traffic_elems_per_px * px * bytes / (d->memory_bandwidth_gbs * 1e9 * bandwidth_efficiency());
    const double compute_s = std::max(seconds - memory_s, seconds * 0.1);
    const double eff = cost.effective_flops(px) / (peak_tflops(*d, precision) * 1e12 * compute_s);
    efficiency_[{d->id, arch}] = eff;
    efficiency_[{"", arch}] = eff;  // a measurement beats the default on other GPUs too
    if (r.contains("peak_activation_bytes")) {
      // The peak is the largest call's: with tiles, a full window, not the mean of all calls.
      const double peak_px = r.contains("peak_input_pixels") ? number(r, "peak_input_pixels", where) : px;
      const double walked = cost.peak_elems_per_px * peak_px * bytes;
      memory_[{d->id, arch}] = number(r, "peak_activation_bytes", where) / walked;
      memory_[{"", arch}] = memory_[{d->id, arch}];
    }
  }
  add_measured_stages(m, d->id);
  for (const json& e : m.value("encoders", json::array())) {
    const std::string where = str(name, ": encoder ", e.value("codec", "?"));
    const double mpx = number(e, "width", where) * number(e, "height", where) * number(e, "fps", where) / 1e6;
    encoders_[{e.value("codec", ""), e.value("preset", "")}] = mpx / number(e, "threads", where);
    add_video_bits(e, m, name);
  }
  ++manifests_;
}

// The output size an encoder entry measured (manifests from before it was recorded have none).
void Calibration::add_video_bits(const json& e, const json& m, const std::string& name) {
  if (!e.contains("key_frames") || !e.contains("key_bytes")) return;
  const std::string where = str(name, ": encoder ", e.value("codec", "?"));
  const double pixels = number(e, "width", where) * number(e, "height", where);
  const double key_frames = number(e, "key_frames", where);
  const double other_frames = e.value("other_frames", 0.0);
  MeasuredVideoBits b;
  b.key_bits_per_pixel = number(e, "key_bytes", where) * 8 / (key_frames * pixels);
  // An intra-only codec has only keyframes: the others would be keyframes too.
  b.other_bits_per_pixel = other_frames > 0 ? e.value("other_bytes", 0.0) * 8 / (other_frames * pixels) : b.key_bits_per_pixel;
  const json encoder = m.value("encoder", json::object());
  if (encoder.contains("crf") && encoder["crf"].is_number()) b.crf = encoder["crf"].get<double>();
  b.manifest = name;
  video_bits_[e.value("codec", "")] = b;
}

// Each stage's whole time (its code and its network calls) over the sample, per input pixel: the
// figure for a stage the planner has no cost model for, valid for this pipeline on this device.
void Calibration::add_measured_stages(const json& m, const std::string& device_id) {
  if (!m.contains("pipeline") || !m["pipeline"].is_string()) return;
  const json input = m.value("input", json::object()), sample = m.value("sample", json::object());
  const double px = input.value("width", 0.0) * input.value("height", 0.0) * sample.value("frames_in", 0.0);
  if (!(px > 0)) return;
  for (const json& st : m.value("stages", json::array())) {
    const int index = st.value("index", 0);  // 1-based, as in the pipeline text
    if (index >= 1) stages_[{device_id, m["pipeline"].get<std::string>(), size_t(index - 1)}] = stage_seconds(st) / px;
  }
}

void Calibration::add_manifest_file(const std::filesystem::path& file, const PlanCatalog& catalog) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::Input, str(file.string(), ": cannot open the calibration manifest"));
  json m;
  try {
    m = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::Input, str(file.string(), ": not valid JSON (", e.what(), ")"));
  }
  add_manifest(m, file.string(), catalog);
}

}  // namespace framelift::plan
