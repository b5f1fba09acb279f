#pragma once
// Reads an ncnn weight file (.bin) the way ncnn's ModelBin does: the file has no index, so the
// layers of the .param are walked in order and each layer type consumes a known sequence of blobs.
// "Weight" blobs start with a 4-byte tag (fp16, int8, fp32, a 256-entry quantization table, or 0
// for raw fp32); the other blobs (bias, PReLU slopes, BatchNorm statistics) are raw fp32.
#include <filesystem>
#include <set>
#include <string>

#include "weights/ncnn_param.h"
#include "weights/state_dict.h"

namespace framelift::weights {

struct NcnnBinOptions {
  // Custom layer types (registered with the interpreter) that store no weights; any other type
  // the reader does not know is an error, because it cannot tell where the next layer's blobs start.
  std::set<std::string> weightless_custom_types;
};

// Tensors named "<layer>.<role>" in PyTorch layouts, so a native architecture can load them:
//   Convolution, ConvolutionDepthWise  .weight [out, in/group, kh, kw], .bias [out]
//   Deconvolution(DepthWise)            .weight [in, out/group, kh, kw] (ConvTranspose2d), .bias
//   InnerProduct                        .weight [out, in], .bias [out]
//   PReLU                               .weight [slopes]
//   Scale                               .weight [n], .bias [n]
//   BatchNorm                           .weight .running_mean .running_var .bias [channels]
//   Padding                             .pad_values [per-channel count]
//   MemoryData                          .data (ncnn shape c,d,h,w with unit axes dropped)
// fp16-tagged blobs stay at::kHalf (the dtype the file stores), everything else is at::kFloat.
// Throws framelift::Error(ErrorKind::Model) for unknown layer types, int8 weights, short files and
// trailing bytes.
StateDict ncnn_to_state_dict(const NcnnGraph& graph, const std::filesystem::path& bin_path,
                             const NcnnBinOptions& options = {});

// The same from bytes already in memory; source_name is used in messages.
StateDict ncnn_to_state_dict(const NcnnGraph& graph, const std::string& bytes, const std::string& source_name,
                             const NcnnBinOptions& options = {});

// Layer types this reader understands that have no weights in the .bin.
bool ncnn_layer_is_weightless(const std::string& type);

}  // namespace framelift::weights
