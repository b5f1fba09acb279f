#include "models/graphed_interpolator.h"

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#if defined(FRAMELIFT_WITH_CUDA)
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "util/log.h"

namespace framelift::models {

#if defined(FRAMELIFT_WITH_CUDA)
namespace {

// Different t (fps conversion) or shapes each need their own graph; past this many, new ones run
// eagerly rather than filling device memory with graphs.
constexpr size_t kMaxGraphs = 8;

class GraphedInterpolator : public FrameInterpolator {
 public:
  explicit GraphedInterpolator(std::unique_ptr<FrameInterpolator> inner) : inner_(std::move(inner)) {}

  const InterpolatorInfo& info() const override { return inner_->info(); }

  void to(c10::Device device, c10::ScalarType dtype) override {
    graphs_.clear();
    inner_->to(device, dtype);
  }

  at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale) override {
    if (failed_ || !a.is_cuda() || a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type())
      return inner_->interpolate(a, b, t, scale);
    const Key key{a.sizes().vec(), int(a.scalar_type()), t, scale};
    auto it = graphs_.find(key);
    if (it == graphs_.end()) {
      if (graphs_.size() >= kMaxGraphs) return inner_->interpolate(a, b, t, scale);
      try {
        it = graphs_.emplace(key, record(a, b, t, scale)).first;
      } catch (const std::exception& e) {
        failed_ = true;
        const std::string why = e.what();
        log::warn("interpolate: CUDA graphs off, eager calls from now on (", why.substr(0, why.find('\n')), ")");
        return inner_->interpolate(a, b, t, scale);
      }
    }
    Graph& g = *it->second;
    g.a.copy_(a, /*non_blocking=*/true);
    g.b.copy_(b, /*non_blocking=*/true);
    g.graph.replay();
    // The graph writes every replay into the same tensor: the caller gets its own copy.
    return g.out.clone();
  }

 private:
  using Key = std::tuple<std::vector<int64_t>, int, double, double>;
  struct Graph {
    at::cuda::CUDAGraph graph;
    at::Tensor a, b, out;  // fixed addresses the recorded kernels read and write
  };

  std::unique_ptr<Graph> record(const at::Tensor& a, const at::Tensor& b, double t, double scale) {
    auto g = std::make_unique<Graph>();
    g->a = a.clone();
    g->b = b.clone();
    const c10::DeviceIndex index = a.device().index();
    c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(index);
    // Capture must not run on the legacy default stream; a side stream, ordered after the inputs.
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index);
    at::cuda::CUDAEvent inputs_ready;
    inputs_ready.record(current);
    inputs_ready.block(side);
    {
      c10::cuda::CUDAStreamGuard on_side(side);
      // Warm-up outside the capture: cuDNN's autotuning and first-call allocations happen here.
      inner_->interpolate(g->a, g->b, t, scale);
      g->graph.capture_begin();
      try {
        g->out = inner_->interpolate(g->a, g->b, t, scale);
      } catch (...) {
        // Leave the stream out of capture mode before reporting; the half-made graph is dropped.
        try {
          g->graph.capture_end();
        } catch (...) {
        }
        throw;
      }
      g->graph.capture_end();
    }
    at::cuda::CUDAEvent recorded;
    recorded.record(side);
    recorded.block(current);
    return g;
  }

  std::unique_ptr<FrameInterpolator> inner_;
  std::map<Key, std::unique_ptr<Graph>> graphs_;
  bool failed_ = false;
};

}  // namespace
#endif

std::unique_ptr<FrameInterpolator> wrap_in_cuda_graphs(std::unique_ptr<FrameInterpolator> model, c10::Device device) {
#if defined(FRAMELIFT_WITH_CUDA)
  if (device.is_cuda()) return std::make_unique<GraphedInterpolator>(std::move(model));
#else
  if (device.is_cuda()) log::warn("interpolate: cuda_graphs=1 needs a CUDA build of framelift; eager calls");
#endif
  return model;
}

}  // namespace framelift::models
