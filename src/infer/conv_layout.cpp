#include "infer/conv_layout.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <mutex>

#include "infer/device.h"
#include "infer/winograd_conv.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

// Smaller kernels run in the network's layout on every CPU measured; larger ones are timed.
constexpr int64_t kTimedKernel = 5;
constexpr int64_t kProbeSide = 64;
// NCHW must win by this much: a close call on a noisy machine keeps the network's layout.
constexpr double kMargin = 1.25;
// One side this much slower after the warm-up call is a cliff; no need for more rounds.
constexpr double kCliff = 4.0;
constexpr int kRounds = 3;

// -1: none (FRAMELIFT_CONV_LAYOUT decides), else a ConvLayoutPolicy.
std::atomic<int> policy_override{-1};

thread_local ConvLayoutRecorder* active_recorder = nullptr;

double milliseconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Times the layer in both layouts on a 64x64 input (warm-up call each, then alternating rounds,
// the best of each side).
ConvChoice measure(const ConvShape& s, const at::Tensor& weight, const at::Tensor& bias) {
  at::InferenceMode guard;
  const at::Tensor nchw = at::rand({1, s.in, kProbeSide, kProbeSide}, weight.options());
  const at::Tensor channels_last = nchw.contiguous(at::MemoryFormat::ChannelsLast);
  auto run = [&](const at::Tensor& x) {
    return [&, x] { at::conv2d(x, weight, bias, {s.stride, s.stride}, {s.padding, s.padding}, {s.dilation, s.dilation}, s.groups); };
  };
  double a = milliseconds_of(run(nchw)), b = milliseconds_of(run(channels_last));
  // A cliff after the warm-up calls is confirmed by one more call of the slow side: on a shared
  // machine one call can lose its CPU for tens of milliseconds.
  if (a > kCliff * b) a = std::min(a, milliseconds_of(run(nchw)));
  if (b > kCliff * a) b = std::min(b, milliseconds_of(run(channels_last)));
  if (std::max(a, b) < kCliff * std::min(a, b)) {
    a = b = std::numeric_limits<double>::infinity();
    for (int r = 0; r < kRounds; ++r) {
      a = std::min(a, milliseconds_of(run(nchw)));
      b = std::min(b, milliseconds_of(run(channels_last)));
    }
  }
  ConvChoice c;
  c.chosen = true;
  c.layout = a * kMargin < b ? ConvLayout::Nchw : ConvLayout::ChannelsLast;
  c.nchw_ms = a;
  c.channels_last_ms = b;
  char text[160];
  std::snprintf(text, sizeof text, "measured at %lldx%lld: nchw %.3g ms, channels-last %.3g ms", static_cast<long long>(kProbeSide),
                static_cast<long long>(kProbeSide), a, b);
  c.why = text;
  return c;
}

// A choice made without measuring. Returned as a prvalue: moving a named ConvChoice out of a
// function with several returns made GCC 12 warn of a memcpy past its end (-Warray-bounds).
ConvChoice unmeasured(bool chosen, ConvLayout layout, std::string why) {
  return ConvChoice{chosen, layout, 0, 0, std::move(why)};
}

ConvChoice choose(const ConvShape& s, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const ConvLayoutPolicy policy = conv_layout_policy();
  if (policy == ConvLayoutPolicy::Nchw) return unmeasured(true, ConvLayout::Nchw, "FRAMELIFT_CONV_LAYOUT=nchw");
  if (!x.is_cpu()) return unmeasured(false, ConvLayout::ChannelsLast, "not on the CPU: the network's layout");
  if (policy == ConvLayoutPolicy::ChannelsLast)
    return unmeasured(false, ConvLayout::ChannelsLast, "FRAMELIFT_CONV_LAYOUT=channels-last: the network's layout");
  if (std::max(s.kh, s.kw) < kTimedKernel)
    return unmeasured(false, ConvLayout::ChannelsLast, str("kernel under ", kTimedKernel, "x", kTimedKernel, ": the network's layout"));
  if (policy == ConvLayoutPolicy::LargeNchw) return unmeasured(true, ConvLayout::Nchw, "FRAMELIFT_CONV_LAYOUT=large-nchw");
  static std::mutex mutex;
  static std::map<ConvShape, ConvChoice> measured;
  // Held while measuring: two threads timing at once would slow each other's numbers.
  std::lock_guard<std::mutex> lock(mutex);
  auto it = measured.find(s);
  if (it == measured.end()) {
    it = measured.emplace(s, measure(s, weight, bias)).first;
    // Debug, not info: `models info` reports it, and its JSON on stdout should come alone.
    log::debug("layout: ", s.describe(), " ", precision_name(s.dtype), ": ", layout_name(it->second.layout), " (", it->second.why, ")");
  }
  return it->second;
}

at::MemoryFormat format_of(ConvLayout layout) {
  return layout == ConvLayout::Nchw ? at::MemoryFormat::Contiguous : at::MemoryFormat::ChannelsLast;
}

std::string layout_of(const at::Tensor& x) {
  if (x.is_contiguous()) return "nchw";
  if (x.is_contiguous(at::MemoryFormat::ChannelsLast)) return "channels-last";
  return "strided";
}

ConvShape shape_of(const at::Tensor& weight, int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
  return {weight.scalar_type(), weight.size(1) * groups, weight.size(0), weight.size(2), weight.size(3),
          stride,               padding,                 dilation,       groups};
}

// The convolution by Winograd with `activation` fused, or nothing where it does not apply.
std::optional<at::Tensor> by_winograd(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t stride,
                                      int64_t padding, int64_t dilation, int64_t groups,
                                      winograd::Activation activation = winograd::Activation::None,
                                      const at::Tensor& slopes = {}, float slope = 0) {
  if (!winograd_applies(x, weight, stride, padding, dilation, groups)) return std::nullopt;
  if (active_recorder)
    active_recorder->record(shape_of(weight, stride, padding, dilation, groups), "channels-last winograd",
                            "fp32 3x3 by Winograd F(4x4,3x3)");
  return winograd_conv2d(x, weight, bias, activation, slopes, slope).contiguous(x.suggest_memory_format());
}

}  // namespace

std::string layout_name(ConvLayout layout) { return layout == ConvLayout::Nchw ? "nchw" : "channels-last"; }

std::optional<ConvLayoutPolicy> parse_conv_layout_policy(std::string_view text) {
  if (text.empty() || text == "auto") return ConvLayoutPolicy::Auto;
  if (text == "channels-last") return ConvLayoutPolicy::ChannelsLast;
  if (text == "large-nchw") return ConvLayoutPolicy::LargeNchw;
  if (text == "nchw") return ConvLayoutPolicy::Nchw;
  return std::nullopt;
}

ConvLayoutPolicy conv_layout_policy() {
  if (const int forced = policy_override.load(); forced >= 0) return static_cast<ConvLayoutPolicy>(forced);
  const char* v = std::getenv("FRAMELIFT_CONV_LAYOUT");
  const std::optional<ConvLayoutPolicy> p = parse_conv_layout_policy(v ? v : "");
  if (!p) throw Error(ErrorKind::Usage, str("FRAMELIFT_CONV_LAYOUT=", v, ": expected auto, channels-last, large-nchw or nchw"));
  return *p;
}

void set_conv_layout_policy(std::optional<ConvLayoutPolicy> policy) { policy_override.store(policy ? static_cast<int>(*policy) : -1); }

at::MemoryFormat activation_format(const c10::Device&) {
  return conv_layout_policy() == ConvLayoutPolicy::Nchw ? at::MemoryFormat::Contiguous : at::MemoryFormat::ChannelsLast;
}

std::string ConvShape::describe() const {
  std::string text = str(kh, "x", kw, " ");
  if (depthwise() && out == in) text += str("depthwise ", in);
  else text += str("conv ", in, "->", out, groups > 1 ? str(" groups ", groups) : "");
  if (stride > 1) text += str(" stride ", stride);
  if (dilation > 1) text += str(" dilation ", dilation);
  return text;
}

at::Tensor conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t stride, int64_t padding,
                  int64_t dilation, int64_t groups) {
  if (auto y = by_winograd(x, weight, bias, stride, padding, dilation, groups)) return *y;
  const ConvShape s = shape_of(weight, stride, padding, dilation, groups);
  const ConvChoice c = choose(s, x, weight, bias);
  if (!c.chosen) {
    if (active_recorder) active_recorder->record(s, layout_of(x), c.why);
    return at::conv2d(x, weight, bias, {stride, stride}, {padding, padding}, {dilation, dilation}, groups);
  }
  const at::Tensor input = x.contiguous(format_of(c.layout));
  if (active_recorder) active_recorder->record(s, layout_of(input), c.why);
  const at::Tensor y = at::conv2d(input, weight, bias, {stride, stride}, {padding, padding}, {dilation, dilation}, groups);
  // Back in the network's layout: what follows (elementwise ops, a cat, the next small conv) would
  // otherwise mix layouts and run strided. Two transposes of one map cost little next to a kernel
  // of 25 taps or more.
  return y.contiguous(x.suggest_memory_format());
}

at::Tensor conv2d_prelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t stride,
                        int64_t padding, const at::Tensor& slopes) {
  if (slopes.scalar_type() == at::kFloat && (slopes.numel() == 1 || slopes.numel() == weight.size(0))) {
    const bool one = slopes.numel() == 1;
    if (auto y = by_winograd(x, weight, bias, stride, padding, 1, 1,
                             one ? winograd::Activation::Uniform : winograd::Activation::PerChannel, one ? at::Tensor() : slopes,
                             one ? slopes.item<float>() : 0.0f))
      return *y;
  }
  return at::prelu(conv2d(x, weight, bias, stride, padding), slopes);
}

at::Tensor conv2d_leaky_relu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t stride,
                             int64_t padding, double slope) {
  if (auto y = by_winograd(x, weight, bias, stride, padding, 1, 1, winograd::Activation::Uniform, {}, float(slope))) return *y;
  at::Tensor y = conv2d(x, weight, bias, stride, padding);
  return at::leaky_relu_(y, slope);
}

ConvLayoutRecorder::ConvLayoutRecorder() { active_recorder = this; }

ConvLayoutRecorder::~ConvLayoutRecorder() {
  if (active_recorder == this) active_recorder = nullptr;
}

void ConvLayoutRecorder::record(const ConvShape& shape, const std::string& layout, const std::string& why) {
  for (Entry& e : entries_) {
    if (e.shape == shape && e.layout == layout) {
      ++e.calls;
      return;
    }
  }
  const double flop = 2.0 * double(shape.out) * double(shape.in / shape.groups) * double(shape.kh * shape.kw) /
                      double(shape.stride * shape.stride);
  entries_.push_back({shape, layout, why, 1, flop});
}

std::vector<ConvLayoutRecorder::Entry> ConvLayoutRecorder::entries() const {
  std::vector<Entry> sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Entry& a, const Entry& b) { return a.flop_per_pixel * a.calls > b.flop_per_pixel * b.calls; });
  return sorted;
}

}  // namespace framelift::infer
