#pragma once
// Runs an ONNX graph (.onnx, weights::onnx::parse_onnx) on ATen, as a models::ImageModel.
//
// At load every node is built from the operator table (op_registry.h): an operator or attribute
// value the table does not have is refused then, naming the node, the operator and the file, never
// guessed at run time. Nodes whose inputs are all known (initializers, Constants, their results)
// are computed once at load (constant folding) and become values. The graph must take one image
// [N, C, H, W] and give one; its scale and size multiple are measured by probe runs, as for ncnn
// graphs, since a dynamic export's shapes say neither. See docs/models.md, "ONNX models".
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "arch/cost.h"
#include "infer/image_model.h"
#include "models/onnx/onnx_op.h"
#include "weights/onnx_proto.h"

namespace framelift::models::onnx {

// The opsets whose operator definitions the table implements.
constexpr int64_t kMinOpset = 11, kMaxOpset = 20;

struct OnnxGraphStats {
  size_t nodes = 0;         // in the file
  size_t folded = 0;        // computed at load
  size_t initializers = 0;
  int64_t parameters = 0;   // elements of the float initializers
  std::map<std::string, int> op_counts;  // op_type -> nodes that run per frame
};

class OnnxModel : public ImageModel {
 public:
  static std::unique_ptr<OnnxModel> load(const std::filesystem::path& file);
  explicit OnnxModel(weights::onnx::Model model);
  ~OnnxModel() override;

  const ModelInfo& info() const override { return info_; }
  at::Tensor forward(const at::Tensor& input) override;
  void to(c10::Device device, c10::ScalarType dtype) override;

  // The graph as it is, no padding or cropping: the first input to the first output.
  at::Tensor run(const at::Tensor& input);
  const OnnxGraphStats& stats() const { return stats_; }
  // The nodes that run per frame, in order, with their constant inputs (weights) from input 1 on;
  // undefined where an input is computed. What onnx_native.h maps onto native architectures.
  struct WeightedNode {
    std::string op_type;
    std::vector<at::Tensor> weights;
  };
  std::vector<WeightedNode> weighted_nodes() const;
  // The initializers the graph still reads, by their names in the file.
  std::map<std::string, at::Tensor> initializer_values() const;
  // The planner's cost model of this graph, counted from its operators on one fp32 CPU run of a
  // 64x64 input (Conv/ConvTranspose/MatMul/Gemm multiply-accumulates from their real shapes, the
  // live and written activation elements), per input pixel; arch "onnx_graph".
  arch::ArchCost cost_model();
  int64_t opset() const { return opset_; }
  const std::string& input_name() const { return input_name_; }
  const std::string& output_name() const { return output_name_; }

 private:
  struct Step;
  void build(const weights::onnx::Model& model);
  void probe_geometry();
  struct Counts;
  at::Tensor run(const at::Tensor& input, bool* whole_picture, Counts* counts = nullptr);
  int value(const std::string& name) const;

  std::string source_;
  int64_t opset_ = 0;
  std::vector<Step> steps_;
  std::map<std::string, int> values_;
  std::vector<at::Tensor> constants_;  // by value index; undefined when computed per run
  std::set<std::string> initializer_names_;
  std::set<int> parameters_;           // values that stay fp32 on the CPU (parameter_input)
  int input_ = -1, output_ = -1;
  std::string input_name_, output_name_;
  OnnxGraphStats stats_;
  ModelInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

}  // namespace framelift::models::onnx
