#include "framelift/probe.h"

#include "media/probe.h"
#include "util/json_text.h"

namespace framelift {

std::string probe(const std::string& input, const ProbeOptions& options) {
  const nlohmann::json info = media::probe(input, {.count_frames = options.count_frames});
  // Only the format asked for is made: the JSON writer is the one that copes with any file name.
  return options.format == ProbeFormat::Json ? json_text(info, 2) : media::probe_text(info);
}

}  // namespace framelift
