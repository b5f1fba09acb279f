// Upscale a video file with a catalog model, as a resumable job, printing progress (the
// callback runs about four times a second on a thread of the library's).
//   upscale_file IN OUT [MODEL] [MAX_FRAMES]
#include <framelift/framelift.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s IN OUT [MODEL] [MAX_FRAMES]\n", argv[0]);
    return 2;
  }
  framelift::RunRequest request;
  request.input = argv[1];
  request.output = argv[2];
  request.pipeline = std::string("upscale:model=") + (argc > 3 ? argv[3] : "realesr-animevideov3-x2");
  request.max_frames = argc > 4 ? std::atoll(argv[4]) : 0;
  request.codec = "libx264";
  request.crf = 18;
  request.overwrite = true;
  try {
    const framelift::RunResult result = framelift::run(request, [](const framelift::Progress& p) {
      std::printf("progress: %lld of %lld frames, %.1f s\n", (long long)p.frames_in, (long long)p.frames_total, p.seconds);
    });
    std::printf("wrote %s: %lld frames in %.1f s (framelift %s)\n", result.output.c_str(), (long long)result.frames_out,
                result.seconds, framelift::version());
    return 0;
  } catch (const framelift::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return framelift::exit_code(e.kind());
  }
}
