#pragma once
// framelift: AI video enhancement (super-resolution, frame interpolation, denoising and
// restoration) on libtorch and FFmpeg, as a library. Link framelift::framelift (CMake:
// find_package(framelift)) or `pkg-config --cflags --libs framelift`; these headers include
// neither libtorch nor FFmpeg headers.
//
//   framelift/pipeline.h  a chain of stages fed frames from memory
//   framelift/policy.h    what a pipeline written by someone else may do (servers)
//   framelift/run.h       a file to a file, as a resumable job, with progress and cancel
//   framelift/job.h       a job folder: create, work a shard, assemble
//   framelift/source.h    decoded frames of a file, in memory
//   framelift/sink.h      frames from memory encoded into a file
//   framelift/plan.h      which GPU and provider fit a job: memory, time, cost
//   framelift/models.h    the model library: catalog and installed models, install, import, verify
//   framelift/deploy.h    a prepared job on a cluster: Slurm or Kubernetes files
//   framelift/probe.h     what a video file holds
//   framelift/values.h    the options' value syntaxes: sizes, durations
//   framelift/process.h   what main() sets up: signal handlers, FFmpeg's log
//   framelift/profile.h   a pipeline measured on a sample of a video: the planner's calibration
//   framelift/frame.h     frames in memory
//   framelift/error.h     the one error type and its exit codes
//   framelift/version.h   the version
#include "framelift/choices.h"
#include "framelift/error.h"
#include "framelift/frame.h"
#include "framelift/pipeline.h"
#include "framelift/policy.h"
#include "framelift/models.h"
#include "framelift/deploy.h"
#include "framelift/probe.h"
#include "framelift/values.h"
#include "framelift/process.h"
#include "framelift/plan.h"
#include "framelift/profile.h"
#include "framelift/job.h"
#include "framelift/machine.h"
#include "framelift/run.h"
#include "framelift/sink.h"
#include "framelift/source.h"
#include "framelift/version.h"
