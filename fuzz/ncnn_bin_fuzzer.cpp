// Any .bin must load or throw framelift::Error; crashes, leaks, UB and huge allocations are bugs.
// The first byte picks a .param graph: one of the small graphs below, which together use every
// layer type the reader takes weights for (so the fuzzer works on blob tags, sizes and counts),
// or, past the last one, a graph taken from the input itself up to its first NUL byte (so counts
// and shapes in the .param are fuzzed against the .bin too). The rest is the .bin.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/error.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace {

constexpr const char* kGraphs[] = {
    // A convolution whose weight blob starts with a tag (fp32, fp16, int8, quantization table).
    "7767517\n2 2\nInput in 0 1 in\nConvolution conv 1 1 in out 0=4 1=3 5=1 6=108\n",
    "7767517\n3 3\nInput in 0 1 in\nConvolutionDepthWise dw 1 1 in a 0=3 1=3 5=1 6=27 7=3\n"
    "Deconvolution up 1 1 a out 0=2 1=4 3=2 5=1 6=96\n",
    "7767517\n4 4\nInput in 0 1 in\nInnerProduct fc 1 1 in a 0=8 1=1 2=64\nPReLU act 1 1 a b 0=8\n"
    "Scale sc 1 1 b out 0=8 1=1\n",
    "7767517\n4 4\nInput in 0 1 in\nBatchNorm bn 1 1 in a 0=16\nPadding pad 1 1 a b 0=1 1=1 2=1 3=1 4=0 6=16\n"
    "MemoryData md 0 1 out 0=4 1=4 2=2\n",
    "7767517\n3 3\nInput in 0 1 in\nDeconvolutionDepthWise dd 1 1 in a 0=4 1=2 3=2 5=0 6=16 7=4\n"
    "Convolution c2 1 1 a out 0=2 1=1 5=1 6=8 8=2\n",
};
constexpr size_t kGraphCount = sizeof kGraphs / sizeof kGraphs[0];

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view param, bin;
  if (data[0] < kGraphCount) {
    param = kGraphs[data[0]];
    bin = rest;
  } else {
    const size_t nul = rest.find('\0');
    param = rest.substr(0, nul);
    bin = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  }
  try {
    const framelift::weights::NcnnGraph graph = framelift::weights::parse_ncnn_param_text(param, "fuzz.param");
    framelift::weights::ncnn_to_state_dict(graph, std::string(bin), "fuzz.bin");
  } catch (const framelift::Error&) {
  }
  return 0;
}
