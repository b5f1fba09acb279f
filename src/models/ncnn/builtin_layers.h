#pragma once
// The built-in ncnn layers, grouped by kind; each file adds its factories to the table.
#include <map>
#include <string>

#include "models/ncnn/ncnn_op.h"

namespace framelift::models::ncnn {

using FactoryTable = std::map<std::string, LayerFactory>;

void add_conv_layers(FactoryTable& table);         // Convolution, Deconvolution, InnerProduct, ...
void add_activation_layers(FactoryTable& table);   // ReLU, PReLU, Clip, Sigmoid, UnaryOp, ...
void add_arithmetic_layers(FactoryTable& table);   // BinaryOp, Eltwise, Scale, BatchNorm, Bias
void add_shape_layers(FactoryTable& table);        // Split, Concat, Crop, Slice, Padding, Reshape, ...
void add_resample_layers(FactoryTable& table);     // Interp, Pooling, PixelShuffle

}  // namespace framelift::models::ncnn
