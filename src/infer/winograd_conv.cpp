#include "infer/winograd_conv.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/intrusive_ptr.h>

#include "util/error.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

std::optional<ConvAlgoPolicy> forced_policy;
std::mutex policy_mutex;
thread_local bool scope_on = false;

// Transformed weights by tensor: the transform is ~300 flops a channel pair, which redone every
// call would cost a Compact frame about a tenth of its time. An entry is valid while its tensor
// lives (the weak pointer) and has not been written to (the version counter).
struct CachedWeights {
  c10::weak_intrusive_ptr<c10::TensorImpl> tensor;
  uint32_t version = 0;
  at::Tensor u;
};
std::mutex cache_mutex;
std::map<const c10::TensorImpl*, CachedWeights> cache;

uint32_t version_of(const at::Tensor& t) { return t.is_inference() ? 0 : t._version(); }

at::Tensor transformed(const at::Tensor& weight, int64_t kp) {
  std::lock_guard lock(cache_mutex);
  const c10::TensorImpl* key = weight.unsafeGetTensorImpl();
  if (auto it = cache.find(key); it != cache.end()) {
    const auto alive = it->second.tensor.lock();
    if (alive.get() == key && it->second.version == version_of(weight) && it->second.u.size(2) == kp) return it->second.u;
  }
  for (auto it = cache.begin(); it != cache.end();) it = it->second.tensor.expired() ? cache.erase(it) : std::next(it);
  const at::Tensor w = weight.contiguous();
  const int64_t k = w.size(0), c = w.size(1);
  at::Tensor u = at::empty({36, c, kp}, w.options());
  winograd::transform_weights(w.data_ptr<float>(), k, c, kp, u.data_ptr<float>());
  cache.insert_or_assign(key, CachedWeights{c10::weak_intrusive_ptr<c10::TensorImpl>(weight.getIntrusivePtr()), version_of(weight), u});
  return u;
}

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};

float* thread_scratch(size_t floats) {
  thread_local std::unique_ptr<float, AlignedFree> buffer;
  thread_local size_t size = 0;
  if (size < floats) {
    const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    buffer.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    if (!buffer) throw Error(ErrorKind::Resource, str("winograd: cannot allocate ", bytes >> 10, " KiB of scratch"));
    size = floats;
  }
  return buffer.get();
}

}  // namespace

std::optional<ConvAlgoPolicy> parse_conv_algo_policy(std::string_view text) {
  if (text.empty() || text == "auto") return ConvAlgoPolicy::Auto;
  if (text == "direct") return ConvAlgoPolicy::Direct;
  if (text == "winograd") return ConvAlgoPolicy::Winograd;
  return std::nullopt;
}

ConvAlgoPolicy conv_algo_policy() {
  {
    std::lock_guard lock(policy_mutex);
    if (forced_policy) return *forced_policy;
  }
  const char* env = std::getenv("FRAMELIFT_CONV_ALGO");
  const auto p = parse_conv_algo_policy(env ? env : "");
  if (!p) throw Error(ErrorKind::Usage, str("FRAMELIFT_CONV_ALGO: expected auto, direct or winograd, got '", env, "'"));
  return *p;
}

void set_conv_algo_policy(std::optional<ConvAlgoPolicy> policy) {
  std::lock_guard lock(policy_mutex);
  forced_policy = policy;
}

WinogradScope::WinogradScope(bool on) : previous_(scope_on) { scope_on = on; }
WinogradScope::~WinogradScope() { scope_on = previous_; }

bool winograd_applies(const at::Tensor& x, const at::Tensor& weight, int64_t stride, int64_t padding, int64_t dilation,
                      int64_t groups) {
  const ConvAlgoPolicy policy = conv_algo_policy();
  if (policy == ConvAlgoPolicy::Direct || (policy == ConvAlgoPolicy::Auto && !scope_on)) return false;
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && x.dim() == 4 &&
         weight.dim() == 4 && weight.size(2) == 3 && weight.size(3) == 3 && stride == 1 && padding == 1 && dilation == 1 &&
         groups == 1 && x.size(1) == weight.size(1) && winograd::supports(weight.size(1)) &&
         // 36 products a tile for kp outputs against the direct 144 for k: a layer of few outputs
         // (RRDB's last 64->3, padded to a whole vector) is cheaper direct.
         winograd::padded_outputs(weight.size(0)) < 4 * weight.size(0) &&
         !(at::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad()));
}

at::Tensor winograd_conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                           winograd::Activation activation, const at::Tensor& slopes, float slope) {
  const at::Tensor input = x.contiguous(at::MemoryFormat::ChannelsLast);
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3), k = weight.size(0);
  at::Tensor out = at::empty({n, k, h, w}, input.options().memory_format(at::MemoryFormat::ChannelsLast));
  if (out.numel() == 0) return out;
  const at::Tensor b = bias.defined() ? bias.contiguous() : bias;
  const at::Tensor s = slopes.defined() ? slopes.contiguous() : slopes;
  winograd::Problem p;
  p.h = h, p.w = w, p.c = c, p.k = k, p.kp = winograd::padded_outputs(k);
  const at::Tensor u = transformed(weight, p.kp);
  p.u = u.data_ptr<float>();
  p.bias = b.defined() ? b.data_ptr<float>() : nullptr;
  p.activation = activation;
  p.slopes = s.defined() ? s.data_ptr<float>() : nullptr;
  p.slope = slope;
  const int64_t per_block = winograd::block_tiles(p), blocks = (p.tiles() + per_block - 1) / per_block;
  const size_t scratch = winograd::scratch_floats(p);
  const float* in = input.data_ptr<float>();
  float* o = out.data_ptr<float>();
  auto run_blocks = [&](int64_t first, int64_t end) {
    float* buffer = thread_scratch(scratch);
    for (int64_t i = first; i < end; ++i) {
      winograd::Problem q = p;
      q.input = in + (i / blocks) * h * w * c;
      q.output = o + (i / blocks) * h * w * k;
      const int64_t t0 = (i % blocks) * per_block;
      winograd::run_tiles(q, t0, std::min(t0 + per_block, p.tiles()), buffer);
    }
  };
  // One thread: no OpenMP region at all, so the pool's other threads stay asleep.
  if (at::get_num_threads() == 1) run_blocks(0, n * blocks);
  else at::parallel_for(0, n * blocks, 1, run_blocks);
  return out;
}

}  // namespace framelift::infer
