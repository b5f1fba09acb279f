#pragma once
// The built-in ONNX operators, grouped by kind; each file adds its factories to the table.
#include <map>
#include <string>

#include "models/onnx/onnx_op.h"

namespace framelift::models::onnx {

using OpTable = std::map<std::string, OpFactory>;

void add_conv_ops(OpTable& table);         // Conv, ConvTranspose, Gemm, MatMul, pools
void add_elementwise_ops(OpTable& table);  // Add..Div, Pow, activations, Clip, Where, Equal, Cast
void add_shape_ops(OpTable& table);        // Concat, Split, Slice, Reshape, Transpose, Shape, Gather, ...
void add_resample_ops(OpTable& table);     // Resize, Upsample, DepthToSpace, SpaceToDepth, Pad, GridSample
void add_norm_ops(OpTable& table);         // Softmax, LayerNormalization, Instance/BatchNormalization, Reduce*

}  // namespace framelift::models::onnx
