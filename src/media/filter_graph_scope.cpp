#include "media/filter_graph_scope.h"

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
}

#include <cctype>
#include <set>
#include <string_view>

#include "media/av_ptr.h"
#include "util/str.h"

namespace framelift::media {
namespace {

// Filters whose output at a frame is a function of that frame, its timestamp and, for the
// temporal ones, a bounded window of neighbours. Adding one is a line; leaving one out only
// costs a job its segments, never its correctness.
const std::set<std::string_view>& cut_safe_filters() {
  static const std::set<std::string_view> names = {
      // geometry and format
      "null", "copy", "scale", "zscale", "crop", "pad", "format", "setsar", "setdar", "setrange", "setparams",
      "setfield", "hflip", "vflip", "transpose", "rotate", "shear", "perspective", "lenscorrection", "fillborders",
      "swapuv", "shuffleplanes", "il",
      // colour
      "eq", "hue", "curves", "lut", "lutrgb", "lutyuv", "lut1d", "lut3d", "colorspace", "colormatrix",
      "colorchannelmixer", "colorbalance", "colorlevels", "colortemperature", "colorcontrast", "colorcorrect",
      "colorize", "colorhold", "exposure", "vibrance", "selectivecolor", "huesaturation", "monochrome", "negate",
      "tonemap", "pseudocolor", "limiter", "histeq", "grayworld", "chromashift", "rgbashift", "vignette",
      // sharpening, blurring, spatial denoising, drawing
      "unsharp", "cas", "smartblur", "gblur", "boxblur", "avgblur", "sab", "bilateral", "median", "convolution",
      "sobel", "prewitt", "roberts", "scharr", "kirsch", "edgedetect", "deband", "gradfun", "deblock", "nlmeans",
      "dctdnoiz", "owdenoise", "vaguedenoiser", "removegrain", "spp", "uspp", "fspp", "pp7", "chromanr",
      "dilation", "erosion", "inflate", "deflate", "drawbox", "drawgrid", "geq", "hqx", "xbr", "super2xbr",
      "showinfo",
      // temporal, with a bounded window (the filter stage's `context`)
      "hqdn3d", "atadenoise", "tmix", "tmedian", "deflicker", "fftdnoiz", "bm3d", "tblend", "yadif", "bwdif",
      "w3fdif", "estdif", "kerndeint"};
  return names;
}

// Expression variables that count frames from the start of what the filter saw, or remember its
// first or previous frame: they restart at every segment.
bool is_counter(std::string_view id) {
  static const std::set<std::string_view> counters = {"n", "N", "in", "on", "selected_n", "STARTPTS", "STARTT",
                                                      "start_pts", "start_t", "frame"};
  return counters.count(id) > 0 || id.rfind("prev_", 0) == 0;
}

// The first counter variable an expression reads, or "".
std::string counter_in(std::string_view expression) {
  for (size_t i = 0; i < expression.size();) {
    const auto c = static_cast<unsigned char>(expression[i]);
    if (std::isalpha(c) || c == '_') {
      size_t j = i;
      while (j < expression.size() && (std::isalnum(static_cast<unsigned char>(expression[j])) || expression[j] == '_')) ++j;
      if (is_counter(expression.substr(i, j - i))) return std::string(expression.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return "";
}

// The first counter any of the filter's string options (or its timeline `enable`) reads.
std::string counter_read_by(const AVFilterContext* f, std::string* option) {
  if (f->enable_str) {
    if (std::string id = counter_in(f->enable_str); !id.empty()) return *option = "enable", id;
  }
  if (!f->filter->priv_class || !f->priv) return "";
  for (const AVOption* o = nullptr; (o = av_opt_next(f->priv, o));) {
    if (o->type != AV_OPT_TYPE_STRING || o->offset <= 0) continue;
    uint8_t* value = nullptr;
    if (av_opt_get(f->priv, o->name, 0, &value) < 0 || !value) continue;
    std::string id = counter_in(reinterpret_cast<const char*>(value));
    av_free(value);
    if (!id.empty()) return *option = o->name, id;
  }
  return "";
}

}  // namespace

std::string whole_video_reason(const std::string& description) {
  FilterGraphPtr graph(avfilter_graph_alloc());
  if (!graph || description.empty()) return "";
  AVFilterInOut *inputs = nullptr, *outputs = nullptr;
  const int ret = avfilter_graph_parse2(graph.get(), description.c_str(), &inputs, &outputs);
  FilterInOutPtr free_inputs(inputs), free_outputs(outputs);
  if (ret < 0) return "";
  for (unsigned i = 0; i < graph->nb_filters; ++i) {
    const AVFilterContext* f = graph->filters[i];
    const std::string name = f->filter->name;
    if (!cut_safe_filters().count(name))
      return str(name, " is not known to work frame by frame (it may count, drop, retime or remember frames from the "
                       "start of the video)");
    std::string option;
    if (std::string id = counter_read_by(f, &option); !id.empty())
      return str(name, "'s ", option, " reads the frame counter '", id, "'");
  }
  return "";
}

}  // namespace framelift::media
