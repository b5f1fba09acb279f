#pragma once
// The weights of an ncnn export (.param + .bin, as shipped with realesrgan-ncnn-vulkan,
// realcugan-ncnn-vulkan and waifu2x-ncnn-vulkan) under the key names of the native architecture
// it was exported from, so build_model() can run them natively. The exports keep the PyTorch
// layer order, so the mapping walks the weighted layers in file order and names them after the
// native network's layers.
//
// Recognised: Real-ESRGAN Compact (Convolution/PReLU chain + PixelShuffle), RRDBNet (Concat,
// Interp upscaling steps), Real-CUGAN se and waifu2x CUNet (Deconvolution, InnerProduct
// squeeze-excitation; the noise-only CUNet has a Convolution where UNet1 upscales) and waifu2x
// UpConv7 (Input, 6 Convolution, 1 Deconvolution).
// Note: realesr-animevideov3-x2/x3 ncnn files are the x4 network followed by a bicubic Interp
// down to 2x/3x; the native model built from them is the x4 network (the resize is not part of
// the weights).
#include "weights/ncnn_param.h"
#include "weights/state_dict.h"

namespace framelift::models {

// ncnn_weights comes from weights::ncnn_to_state_dict(graph, ...). Throws Error(Model)
// "<param file>: ..." when the graph is none of the above or its layer count does not fit.
weights::StateDict ncnn_to_native_state_dict(const weights::NcnnGraph& graph, const weights::StateDict& ncnn_weights);

}  // namespace framelift::models
