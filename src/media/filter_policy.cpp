#include "media/filter_policy.h"

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavutil/avstring.h>
#include <libavutil/opt.h>
}

#include <cctype>
#include <cstring>
#include <vector>

#include "media/av_error.h"
#include "media/av_ptr.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::media {
namespace {

constexpr const char* kWhitespace = " \n\t\r";

// One filter of a graph as libavfilter's parser reads it: the AVFilter it looks up and the
// option string it hands that filter's init.
struct FilterItem {
  std::string name;  // as written, "hflip" or "hflip@left"
  std::string lookup;  // the AVFilter's name libavfilter looks up ("hflip")
  std::string args;
};

std::string owned(char* s) {
  AvStringPtr p(s);
  if (!p) throw Error(ErrorKind::Resource, "filter graph: out of memory");
  return p.get();
}

// graphparser.c's create_filter: "name@instance" looks up "name" when the '@' falls within the
// first 29 characters and something follows it; otherwise the whole name.
std::string lookup_name(const std::string& name) {
  for (size_t k = 0; k < name.size() && k < 29; ++k)
    if (name[k] == '@' && k + 1 < name.size()) return name.substr(0, k);
  return name;
}

// graphparser.c's parse_inputs/parse_outputs: "[label]" runs, each followed by whitespace.
void skip_labels(const char*& p, const std::string& what) {
  while (*p == '[') {
    ++p;
    const std::string label = owned(av_get_token(&p, "]"));
    if (label.empty() || *p != ']') throw Error(ErrorKind::Usage, str(what, ": libavfilter cannot parse the graph: a bad [label]"));
    ++p;
    p += std::strspn(p, kWhitespace);
  }
}

// The graph's filters in the order avfilter_graph_parse2 creates them (FFmpeg 5.1's
// graphparser.c, step by step, with its own tokenizer), without creating any.
std::vector<FilterItem> read_filters(const std::string& description, const std::string& what, std::string* sws_flags) {
  const char* p = description.c_str();
  p += std::strspn(p, kWhitespace);
  if (std::strncmp(p, "sws_flags=", 10) == 0) {
    const char* end = std::strchr(p, ';');
    if (!end) throw Error(ErrorKind::Usage, str(what, ": libavfilter cannot parse the graph: sws_flags without ';'"));
    *sws_flags = std::string(p + 4, end);  // "flags=...": options of every scale filter
    p = end + 1;
  }
  std::vector<FilterItem> items;
  char separator = 0;
  do {
    p += std::strspn(p, kWhitespace);
    skip_labels(p, what);
    FilterItem item;
    item.name = owned(av_get_token(&p, "=,;["));
    item.lookup = lookup_name(item.name);
    if (*p == '=') {
      ++p;
      item.args = owned(av_get_token(&p, "[],;"));
    }
    items.push_back(std::move(item));
    skip_labels(p, what);
    p += std::strspn(p, kWhitespace);
    separator = *p;
    if (separator) ++p;
  } while (separator == ',' || separator == ';');
  if (separator) throw Error(ErrorKind::Usage, str(what, ": libavfilter cannot parse the graph near '", p - 1, "'"));
  return items;
}

// The option names `args` sets on `filter`, positional ones resolved the way avfilter_init_str's
// process_options resolves them (FFmpeg 5.1 avfilter.c), from the filter's AVClass alone.
std::vector<std::string> option_keys(const AVFilter* filter, const std::string& args, const std::string& what) {
  std::vector<std::string> keys;
  if (args.empty() || !filter->priv_class) return keys;  // no options, or init refuses them
  const AVClass* cls = filter->priv_class;
  const void* fake = &cls;  // av_opt_next reads only the AVClass pointer an object starts with
  const AVOption* o = nullptr;
  int offset = -1;
  const char* p = args.c_str();
  while (*p) {
    const char* shorthand = nullptr;
    o = av_opt_next(fake, o);
    if (o) {
      if (o->type == AV_OPT_TYPE_CONST || o->offset == offset) continue;
      offset = o->offset;
      shorthand = o->name;
    }
    char *key_raw = nullptr, *value_raw = nullptr;
    const int ret = av_opt_get_key_value(&p, "=", ":", shorthand ? AV_OPT_FLAG_IMPLICIT_KEY : 0, &key_raw, &value_raw);
    AvStringPtr key(key_raw), value(value_raw);
    if (ret < 0)
      throw Error(ErrorKind::Usage, str(what, ": filter '", filter->name, "': libavfilter cannot read its options (", av_error_text(ret), ")"));
    if (*p) ++p;
    if (key) {
      keys.emplace_back(key.get());
      while ((o = av_opt_next(fake, o))) {
      }  // as process_options: no positional options after a named one
    } else {
      keys.emplace_back(shorthand);
    }
  }
  return keys;
}

void refuse_filter(const std::string& what, const std::string& name) {
  throw Error(ErrorKind::Usage, str(what, ": filter '", name,
                                    "' is not allowed here (only filters that compute on the frames alone; no filter that "
                                    "opens files, loads plugins or takes commands)"));
}

void refuse_option(const std::string& what, const std::string& filter, const std::string& option) {
  throw Error(ErrorKind::Usage, str(what, ": filter '", filter, "' option '", option, "' names a file, which is not allowed here"));
}

// The text check: every filter allowed and no option that names a path, before anything exists.
void check_items(const std::vector<FilterItem>& items, const std::string& sws_flags, const std::set<std::string>& allowed,
                 const std::string& what) {
  for (const FilterItem& item : items) {
    if (!allowed.count(item.lookup)) refuse_filter(what, item.lookup);
    const AVFilter* filter = avfilter_get_by_name(item.lookup.c_str());
    if (!filter) throw Error(ErrorKind::Usage, str(what, ": no filter '", item.lookup, "' in this FFmpeg"));
    for (const std::string& key : option_keys(filter, item.args, what))
      if (names_a_path(key)) refuse_option(what, item.lookup, key);
  }
  const char* p = sws_flags.c_str();
  while (*p) {
    char *key_raw = nullptr, *value_raw = nullptr;
    const int ret = av_opt_get_key_value(&p, "=", ":", 0, &key_raw, &value_raw);
    AvStringPtr key(key_raw), value(value_raw);
    if (ret < 0) throw Error(ErrorKind::Usage, str(what, ": libavfilter cannot read sws_flags"));
    if (names_a_path(key.get())) refuse_option(what, "scale", key.get());
    if (*p) ++p;
  }
}

// The parsed-graph check: what libavfilter built, filter by filter, agrees with the reading above
// and sets no option that names a path.
void check_parsed(const std::string& description, const std::vector<FilterItem>& items, const std::set<std::string>& allowed,
                  const std::string& what) {
  FilterGraphPtr graph(avfilter_graph_alloc());
  if (!graph) throw Error(ErrorKind::Resource, "filter graph: out of memory");
  AVFilterInOut *inputs = nullptr, *outputs = nullptr;
  const int ret = avfilter_graph_parse2(graph.get(), description.c_str(), &inputs, &outputs);
  FilterInOutPtr free_inputs(inputs), free_outputs(outputs);
  if (ret < 0) throw Error(ErrorKind::Usage, str(what, ": libavfilter cannot parse the graph (", av_error_text(ret), ")"));
  if (graph->nb_filters != items.size())
    throw Error(ErrorKind::Usage, str(what, ": the graph does not parse the way it reads; not allowed here"));
  for (unsigned i = 0; i < graph->nb_filters; ++i) {
    const AVFilterContext* f = graph->filters[i];
    const std::string name = f->filter->name;
    if (!allowed.count(name) || name != items[i].lookup) refuse_filter(what, name);
    if (!f->priv) continue;
    for (const AVOption* o = nullptr; (o = av_opt_next(f->priv, o));)
      if (o->type == AV_OPT_TYPE_STRING && names_a_path(o->name) && av_opt_is_set_to_default(f->priv, o) == 0)
        refuse_option(what, name, o->name);
  }
}

}  // namespace

const std::set<std::string>& safe_filters() {
  static const std::set<std::string> names = {
      // geometry and format
      "null", "copy", "scale", "zscale", "crop", "pad", "format", "setsar", "setdar", "setrange", "setparams", "setfield",
      "hflip", "vflip", "transpose", "rotate", "shear", "perspective", "lenscorrection", "fillborders", "swapuv",
      "shuffleplanes", "il", "fieldorder",
      // colour (curves and selectivecolor take a psfile=, refused as an option)
      "eq", "hue", "curves", "lut", "lutrgb", "lutyuv", "colorspace", "colormatrix", "colorchannelmixer", "colorbalance",
      "colorlevels", "colortemperature", "colorcontrast", "colorcorrect", "colorize", "colorhold", "exposure", "vibrance",
      "selectivecolor", "huesaturation", "monochrome", "negate", "tonemap", "pseudocolor", "limiter", "histeq",
      "grayworld", "chromashift", "rgbashift", "vignette",
      // sharpening, blurring, spatial denoising, drawing
      "unsharp", "cas", "smartblur", "gblur", "boxblur", "avgblur", "sab", "bilateral", "median", "convolution", "sobel",
      "prewitt", "roberts", "scharr", "kirsch", "edgedetect", "deband", "gradfun", "deblock", "nlmeans", "dctdnoiz",
      "owdenoise", "vaguedenoiser", "removegrain", "spp", "fspp", "pp7", "chromanr", "dilation", "erosion", "inflate",
      "deflate", "drawbox", "drawgrid", "geq", "hqx", "xbr",
      // temporal with a bounded window
      "hqdn3d", "atadenoise", "tmix", "tmedian", "deflicker", "fftdnoiz", "tblend", "yadif", "bwdif", "w3fdif", "estdif",
      "kerndeint",
      // timing and composition
      "select", "setpts", "settb", "fps", "trim", "fade", "framestep", "tpad", "split", "overlay", "hstack", "vstack",
      "blend"};
  return names;
}

bool names_a_path(std::string_view option) {
  std::string o(option);
  for (char& c : o) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (o == "profile" || o.ends_with("_profile")) return false;
  // curves' plot= writes a Gnuplot script to the file it names.
  return o.find("file") != std::string::npos || o.find("path") != std::string::npos || o == "plot" || o == "model" ||
         o.ends_with("_model") || o == "fontsdir" || o.ends_with("_dir") || o == "plugin" || o == "lib";
}

void check_filter_graph(const std::string& description, const std::set<std::string>& allowed, const std::string& what) {
  if (description.find_first_not_of(kWhitespace) == std::string::npos) return;  // the stage says "give graph="
  std::string sws_flags;
  const std::vector<FilterItem> items = read_filters(description, what, &sws_flags);
  check_items(items, sws_flags, allowed, what);
  check_parsed(description, items, allowed, what);
}

}  // namespace framelift::media
