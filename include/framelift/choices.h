#pragma once
// The choices a request makes, typed (RunRequest, WorkRequest, SourceOptions). framelift/values.h
// parses and names them as the CLI spells them ("--hwaccel cuda", "--shard 2/8"), for front ends
// that take text; the library itself never reads them from strings.
// Thread-safety: plain values.

namespace framelift {

// Where a cloud's spot or preemption notice is watched for (docs/lifecycle.md); Auto: whichever
// metadata service answers.
enum class PreemptionWatch { Off, Auto, Aws, Gcp, Azure };

// Decoding on a hardware device, by FFmpeg's device type; Auto: the first one the codec and the
// machine have; a device the machine lacks falls back to the CPU with a warning.
enum class HwAccel { None, Auto, Cuda, Vaapi, Qsv, Vdpau, Videotoolbox, D3d11va, Dxva2, Drm, Opencl, Vulkan };

// How frames convert between the decoder's YUV and the stages' RGB (docs/frame-layout.md).
enum class ColorConversion {
  Auto,     // tensor ops when the first or last AI stage runs on a GPU, else swscale
  Swscale,  // libswscale on the CPU
  Tensor,   // tensor ops on the stage's device, any device
};

// This process's share of a job's segments: block `index` of `count` (0-based; contiguous, so a
// worker decodes one stretch). from_environment: the index (and, with count 0, the count) comes
// from the array engine when the run starts: SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of
// SLURM_ARRAY_TASK_COUNT, or Kubernetes' JOB_COMPLETION_INDEX.
struct Shard {
  int index = 0;
  int count = 1;
  bool from_environment = false;
};

// Segments first..last, 0-based and inclusive; last -1: to the end.
struct SegmentRange {
  int first = 0;
  int last = -1;
};

}  // namespace framelift
