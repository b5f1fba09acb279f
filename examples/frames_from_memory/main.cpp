// Frames from memory through a pipeline: a program that brings its own frames (a GUI, a server,
// a frame server) builds the chain once, configures it, sends frames and receives the results.
// Here: a synthetic 8-bit RGB gradient, resized 2x and interpolated to twice the frame rate.
//   frames_from_memory [PIPELINE]
#include <framelift/framelift.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  const char* text = argc > 1 ? argv[1] : "resize:scale=2,interpolate:factor=2";
  try {
    framelift::Pipeline pipeline(text, {{"device", "cpu"}});
    for (const framelift::StageReport& s : pipeline.stages())
      std::printf("stage %s on %s, %d context frame(s)\n", s.name.c_str(), s.device.c_str(), s.context_frames);
    framelift::VideoShape in;
    in.width = 64;
    in.height = 48;
    in.frame_rate_num = 25;
    in.time_base_num = 1;
    in.time_base_den = 25;
    const framelift::VideoShape out = pipeline.configure(in);
    std::printf("in %dx%d at %d/%d fps -> out %dx%d at %d/%d fps\n", in.width, in.height, in.frame_rate_num,
                in.frame_rate_den, out.width, out.height, out.frame_rate_num, out.frame_rate_den);
    int received = 0;
    std::vector<uint8_t> rgb(size_t(in.width) * in.height * 3), back(size_t(out.width) * out.height * 3);
    auto drain = [&] {
      while (auto f = pipeline.receive()) {
        framelift::to_rgb24(*f, back.data(), out.width * 3);
        std::printf("frame pts %lld: %dx%d, first pixel %d %d %d\n", (long long)f->pts, f->width, f->height, back[0],
                    back[1], back[2]);
        ++received;
      }
    };
    for (int i = 0; i < 4; ++i) {
      for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
          uint8_t* p = &rgb[(size_t(y) * in.width + x) * 3];
          p[0] = uint8_t(x * 4), p[1] = uint8_t(y * 5), p[2] = uint8_t(i * 60);
        }
      pipeline.send(framelift::from_rgb24(rgb.data(), in.width, in.height, in.width * 3, i));
      drain();
    }
    pipeline.flush();
    drain();
    std::printf("%d frames out of 4 in\n", received);
    return 0;
  } catch (const framelift::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return framelift::exit_code(e.kind());
  }
}
