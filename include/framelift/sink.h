#pragma once
// Frames from memory encoded into a video file: the last half of what run() does, one frame at
// a time (see framelift/source.h for the loop that joins the two). The file is written under a
// temporary name next to the output and appears under its final name only when close()
// finishes it; a Sink destroyed without close() (an error, a cancel) removes what it wrote.
//
// Errors: throw framelift::Error: Usage (an unknown encoder, pixel format or option), Output (the
// output exists without overwrite, the folder is not writable), Input (a frame whose size is not
// the shape's). A moved-from Sink may be destroyed or assigned a new one (the file it was writing
// goes with the Sink it moved to); every other function throws
// Error(Usage, "framelift::Sink: used after being moved from").
// Thread-safety: one thread at a time per Sink.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "framelift/frame.h"
#include "framelift/pipeline.h"

namespace framelift {

struct SinkOptions {
  std::string codec{};                             // "": libx264 (or the container's default)
  std::optional<double> crf{};
  std::string preset{};
  std::string pix_fmt{};                           // "": yuv420p where the encoder takes it
  std::map<std::string, std::string> encoder_options{};
  std::string container{};                         // "": from the output's extension
  bool overwrite = false;                          // replace an existing output
};

class Sink {
 public:
  // `shape`: the frames' size, rate and time base (what Pipeline::configure returned).
  Sink(const std::string& output, const VideoShape& shape, const SinkOptions& options = {});
  ~Sink();
  Sink(Sink&&) noexcept;
  Sink& operator=(Sink&&) noexcept;

  // The next frame in presentation order; pts in the shape's time base.
  void write(const Frame& frame);
  // Drains the encoder, writes the trailer, syncs and renames the file into place. Returns the
  // number of frames written. Calling it again does nothing.
  int64_t close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace framelift
