#pragma once
// Runs an ncnn network (.param + .bin) with ATen ops, as a models::ImageModel.
//
// The graph is interpreted layer by layer (see ncnn_op.h for the blob layout and layer_registry.h
// for custom layers). As an ImageModel it maps one [N, C, H, W] image in [0, 1] to its upscaled
// version: the geometry (scale, size multiple, border the net crops away) is measured once at load
// by running two tiny probe inputs, and a net that crops its border (Real-CUGAN) gets its input
// reflect-padded by that border, the way realcugan-ncnn-vulkan pads its tiles. See docs/ncnn.md.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "infer/image_model.h"
#include "models/ncnn/ncnn_op.h"
#include "weights/ncnn_param.h"
#include "weights/state_dict.h"

namespace framelift::models::ncnn {

struct NcnnModelOptions {
  std::string input_blob;   // default: the first Input layer's blob
  std::string output_blob;  // default: the last layer's first output blob
  // Measure the geometry with probe runs. Off: info() is scale 1, multiple 1, no border, which
  // suits callers that only use run() (multi-input nets such as RIFE).
  bool probe = true;
};

// How the net maps sizes: out = scale * in - 2 * border_out, for in a multiple of size_multiple.
struct NcnnGeometry {
  int scale = 1;
  int size_multiple = 1;
  int border_out = 0;  // output pixels the net crops on each side
  // The net outputs only the detail to add to a nearest-neighbour upscale of its input (Real-CUGAN
  // 4x: the upstream model adds that itself, its ncnn export leaves it to the caller).
  bool residual = false;
};

class NcnnModel : public ImageModel {
 public:
  static std::unique_ptr<NcnnModel> load(const std::filesystem::path& param, const std::filesystem::path& bin,
                                         NcnnModelOptions options = {});
  NcnnModel(weights::NcnnGraph graph, const weights::StateDict& weights, NcnnModelOptions options = {});
  ~NcnnModel() override;

  const ModelInfo& info() const override { return info_; }
  const NcnnGeometry& geometry() const { return geometry_; }
  // [N, C, H, W] in [0, 1] -> [N, C, H*scale, W*scale]; H and W multiples of size_multiple.
  at::Tensor forward(const at::Tensor& input) override;
  void to(c10::Device device, c10::ScalarType dtype) override;

  // The raw graph: feeds named blobs, returns the requested blobs (no padding or cropping).
  // Tensors are batched ncnn blobs ([N, C, H, W] for images).
  std::map<std::string, at::Tensor> run(const std::map<std::string, at::Tensor>& inputs,
                                        const std::vector<std::string>& outputs);
  at::Tensor run(const at::Tensor& input);  // input_blob -> output_blob

 private:
  struct Step;
  NcnnGeometry probe_geometry();
  int index_of(const std::string& blob) const;

  weights::NcnnGraph graph_;
  NcnnModelOptions options_;
  std::vector<Step> steps_;
  std::map<std::string, int> blob_index_;
  std::string input_blob_, output_blob_;
  NcnnGeometry geometry_;
  ModelInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

}  // namespace framelift::models::ncnn
