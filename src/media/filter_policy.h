#pragma once
// Which libavfilter graphs may run when their author is not trusted (a remote user of `framelift
// serve`, an embedder's customer). libavfilter has filters that open files (movie, amovie,
// subtitles, lut3d's file=, drawtext's textfile=), write them (metadata's file=, psnr's
// stats_file=), load code (ladspa, lv2, frei0r) or take commands (sendcmd, zmq). A graph may use
// only the filters of an allow-list, and none of their options that names a file.
//
// Checked on the graph as libavfilter reads it, never on the text as it looks: names and options
// come from libavfilter's own tokenizer (av_get_token, av_opt_get_key_value), so quotes, escapes,
// `[label]`s, `;` chains, `name@instance` and positional options read as they will at run time.
// That reading happens before any filter is created, because creating one runs its init, and init
// is where ladspa loads its plugin and metadata truncates its file. The graph is then parsed for
// real into a scratch graph and each AVFilterContext's name and set options are checked again.
//
// Pure; thread-safe.
#include <set>
#include <string>
#include <string_view>

namespace framelift::media {

// Filters that only compute on the frames they are given: geometry, colour, sharpening and
// denoising, drawing boxes, timing, stacking. None loads, runs or opens anything, save through
// the options names_a_path() refuses (curves' psfile= and plot=, selectivecolor's psfile=).
const std::set<std::string>& safe_filters();

// Whether a filter option names a file or a folder: file, filename, textfile, fontfile, psfile,
// stats_file, log_path, model, curves' plot, ... ("profile" does not). Refused in any filter.
bool names_a_path(std::string_view option);

// Throws Error(Usage) with one line, "<what>: filter 'movie' is not allowed (...)" or "<what>:
// filter 'curves' option 'psfile' names a file, which is not allowed", when `description` uses a
// filter outside `allowed` or sets an option that names a path. A description libavfilter cannot
// parse is refused too ("<what>: libavfilter cannot parse the graph: ...").
void check_filter_graph(const std::string& description, const std::set<std::string>& allowed, const std::string& what);

}  // namespace framelift::media
