#include "models/kair_blocks.h"

#include <ATen/ATen.h>

#include "util/str.h"

namespace framelift::models {

at::Tensor ResBlock::operator()(const at::Tensor& x) const { return x + second(at::relu(first(x))); }

std::vector<ResBlock> read_res_blocks(WeightReader& r, const std::string& prefix, int first_index, int count,
                                      int64_t channels, bool bias) {
  std::vector<ResBlock> blocks;
  for (int i = first_index; i < first_index + count; ++i) {
    const std::string p = str(prefix, ".", i, ".res.");
    blocks.push_back({read_conv(r, p + "0", channels, channels, 3, 1, 1, bias), read_conv(r, p + "2", channels, channels, 3, 1, 1, bias)});
  }
  return blocks;
}

at::Tensor run_blocks(const std::vector<ResBlock>& blocks, at::Tensor x) {
  for (const ResBlock& b : blocks) x = b(x);
  return x;
}

void visit(std::vector<ResBlock>& blocks, const TensorVisitor& f) {
  for (ResBlock& b : blocks) {
    visit(b.first, f);
    visit(b.second, f);
  }
}

}  // namespace framelift::models
