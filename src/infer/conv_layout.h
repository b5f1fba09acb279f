#pragma once
// The memory format each convolution of a native network runs in, chosen per layer shape from what
// is fast on the CPU in use, never one global channels-last (issue 37).
//
// The networks keep their activations channels-last between layers (activation_format()): oneDNN's
// 3x3 and 1x1 convolutions are fastest that way on every CPU measured (docs/performance.md, "Layouts
// per layer"), and those run in whatever layout their input has, as they always did. A convolution
// with a kernel of 5 or more (PLKSR's 17x17, MoSR's 7x7 depthwise, ...) is where oneDNN's kernels
// differ by CPU: on an AVX2-only EPYC a 17x17 conv over 16 channels took 1.4 s channels-last and
// 0.09 s in NCHW, on an AVX-512 Xeon the two are within 20%. For those layers each layout is timed
// once per process and shape (64x64 input, the layer's own weights, alternating, best of three; the
// warm-up calls alone when one side is over 4x the other, confirmed by a second call of the slow
// side, so that a cliff costs two slow calls, not a round of them) and NCHW is taken only when it is 1.25x
// faster, so that a close call on a noisy machine stays channels-last. The input is converted to
// that layout and the output back to the input's, so nothing after the layer sees the difference.
//
// FRAMELIFT_CONV_LAYOUT=auto (default) | channels-last (every layer in the network's layout: the
// behaviour before per-layer choice) | large-nchw (the kernels of 5 and more in NCHW without
// timing them: what the AVX2 EPYC's measurements pick; deterministic, and what the tests use to
// reach that path on any CPU) | nchw (activations and every conv in plain NCHW: what eager PyTorch
// does by default, the speed grid's reference). Thread-safety: all functions may be called from
// any thread; the cache of choices is shared by the process.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace framelift::infer {

enum class ConvLayout { Nchw, ChannelsLast };
std::string layout_name(ConvLayout layout);  // "nchw", "channels-last"

enum class ConvLayoutPolicy { Auto, ChannelsLast, LargeNchw, Nchw };
// "auto" (or ""), "channels-last", "large-nchw", "nchw"; nullopt for anything else.
std::optional<ConvLayoutPolicy> parse_conv_layout_policy(std::string_view text);
// The policy set_conv_layout_policy() set for this process, else FRAMELIFT_CONV_LAYOUT's (read at
// each call); an unknown value of the variable is an Error(Usage) naming it. resolve_target()
// (infer/device.h) asks once, so a wrong value fails before any work.
ConvLayoutPolicy conv_layout_policy();
// nullopt: back to the variable. For tests and the speed grid, which switch between calls.
void set_conv_layout_policy(std::optional<ConvLayoutPolicy> policy);

// The memory format a native network keeps its activations in on `device`: channels-last, or
// contiguous (NCHW) under the nchw policy.
at::MemoryFormat activation_format(const c10::Device& device);

// What decides a convolution's layout: everything but the input's size.
struct ConvShape {
  c10::ScalarType dtype = c10::kFloat;
  int64_t in = 0, out = 0, kh = 0, kw = 0, stride = 1, padding = 0, dilation = 1, groups = 1;
  bool depthwise() const { return groups > 1 && groups == in; }
  std::string describe() const;  // "17x17 conv 16->16", "7x7 depthwise 48", "3x3 conv 64->64 stride 2"
  auto key() const { return std::tie(dtype, in, out, kh, kw, stride, padding, dilation, groups); }
  bool operator<(const ConvShape& o) const { return key() < o.key(); }
  bool operator==(const ConvShape& o) const { return key() == o.key(); }
};

struct ConvChoice {
  bool chosen = false;  // false: the layer runs in its input's layout (small kernels, CUDA, a forced policy)
  ConvLayout layout = ConvLayout::ChannelsLast;
  double nchw_ms = 0, channels_last_ms = 0;  // the measurement, when there was one
  std::string why;  // "measured at 64x64: nchw 0.09 ms, channels-last 1.41 ms", "kernel < 5: the network's layout"
};

// at::conv2d (square stride, padding and dilation) in the layout chosen for its shape.
at::Tensor conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t stride, int64_t padding,
                  int64_t dilation = 1, int64_t groups = 1);

// at::prelu(conv2d(...), slopes) (slopes [out] or [1]) and at::leaky_relu(conv2d(...), slope):
// where the convolution runs by Winograd (infer/winograd_conv.h) the activation is fused into its
// output transform, saving a pass over the map; elsewhere the two ops run one after the other.
at::Tensor conv2d_prelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t stride,
                        int64_t padding, const at::Tensor& slopes);
at::Tensor conv2d_leaky_relu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t stride,
                             int64_t padding, double slope);

// What the layers of one forward pass on this thread ran in: every conv2d() call between
// construction and destruction is counted by shape and the layout it actually took. For
// `models info` and tests. Scopes do not nest (the inner one counts, the outer one misses those).
class ConvLayoutRecorder {
 public:
  struct Entry {
    ConvShape shape;
    std::string layout;  // what the input was run in: "nchw", "channels-last" or "strided"
    std::string why;
    int64_t calls = 0;
    double flop_per_pixel = 0;  // 2 * out * in / groups * kh * kw / stride^2 per input pixel
  };
  ConvLayoutRecorder();
  ~ConvLayoutRecorder();
  ConvLayoutRecorder(const ConvLayoutRecorder&) = delete;
  ConvLayoutRecorder& operator=(const ConvLayoutRecorder&) = delete;
  // Distinct (shape, layout) pairs, heaviest first (flop_per_pixel * calls).
  std::vector<Entry> entries() const;

  void record(const ConvShape& shape, const std::string& layout, const std::string& why);

 private:
  std::vector<Entry> entries_;
};

}  // namespace framelift::infer
