#include "run/job_runner.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "jobs/assemble.h"
#include "jobs/claims.h"
#include "jobs/fingerprint.h"
#include "jobs/job_dir.h"
#include "jobs/job_spec.h"
#include "jobs/journal.h"
#include "jobs/segment_plan.h"
#include "lifecycle/hooks.h"
#include "lifecycle/preemption_watcher.h"
#include "media/demuxer.h"
#include "media/encoder.h"
#include "media/muxer.h"
#include "pipeline/stage_registry.h"
#include "run/disk_check.h"
#include "run/warm_stages.h"
#include "util/crash_point.h"
#include "util/disk_space.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/json_text.h"
#include "util/log.h"
#include "util/stop.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

bool wants_global_header(const RunOptions& o) {
  return o.output.extension() != ".ts" && o.container != "mpegts";
}

jobs::JobSpec spec_of(const JobOptions& o) {
  jobs::JobSpec s;
  static_cast<jobs::RunSpec&>(s) = o.run;
  s.framelift_version = o.framelift_version;
  // Workers on other machines start in other folders: a local input is kept by absolute path.
  std::error_code ec;
  if (fs::exists(o.run.input, ec)) s.input = fs::absolute(o.run.input).string();
  s.input_fingerprint = jobs::fingerprint_input(o.run.input);
  s.output = fs::absolute(o.run.output);
  s.segment_frames = o.segment_frames;
  // Cut into segments, such a stage restarts its count at each one and writes another video.
  if (const std::string why = whole_video_reason(o.run.pipeline); !why.empty()) {
    if (o.segment_frames > 0) log::warn(why, "; the job runs as one segment, not in segments of --segment-frames ", o.segment_frames);
    else log::info(why, "; the job runs as one segment (resumable only as a whole)");
    s.segment_frames = jobs::kWholeVideoSegment;
  }
  return s;
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::Usage, str(file.string(), ": cannot read"));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::Usage, str(file.string(), ": damaged (", e.what(), ")"));
  }
}

struct OpenJob {
  jobs::JobDir dir;
  jobs::JobSpec spec;
  jobs::SegmentPlan plan;
};

// plan.json is a function of the spec (input, segment length, frame limit), so whoever finds it
// missing writes it: the run that created the job, or one joining after that run died between
// job.json and plan.json. The first write wins; the others would have written the same plan.
jobs::SegmentPlan ensure_plan(const jobs::JobDir& dir, const jobs::JobSpec& spec) {
  std::error_code ec;
  if (!fs::exists(dir.plan_file(), ec)) {
    crash_point("plan");
    const jobs::SegmentPlan plan = jobs::plan_segments(spec.input, spec.segment_frames, spec.max_frames);
    write_file_no_replace(dir.plan_file(), jobs::to_json(plan).dump() + "\n");
    crash_point("planned");
  }
  return jobs::plan_from_json(read_json(dir.plan_file()), dir.plan_file().string());
}

OpenJob load_job(const fs::path& root) {
  jobs::JobDir dir(root);
  if (!dir.exists()) throw Error(ErrorKind::Usage, str(root.string(), ": no job here (job.json is missing)"));
  jobs::JobSpec spec = jobs::spec_from_json(read_json(dir.spec_file()), dir.spec_file().string());
  jobs::SegmentPlan plan = ensure_plan(dir, spec);
  return OpenJob{dir, std::move(spec), std::move(plan)};
}

// Creates the job by committing job.json without replacing: of two runs that start on one output
// at once, exactly one creates the job and the other compares its spec with it (joins, or is
// refused), so their segments never mix. False when another run created it first.
bool create_job(const jobs::JobDir& dir, const jobs::JobSpec& spec) {
  // Written out first: a spec that cannot be kept (text that is not UTF-8) leaves no folder behind.
  const std::string text = json_file_text(jobs::to_json(spec), dir.spec_file().string(), 1) + "\n";
  dir.create();
  return write_file_no_replace(dir.spec_file(), text);
}

// Opens the job in the folder when it is this job, else creates it.
OpenJob open_or_create(const JobOptions& o, const fs::path& root) {
  jobs::JobSpec wanted = spec_of(o);
  jobs::JobDir dir(root);
  for (int attempt = 0;; ++attempt) {
    if (dir.exists()) {
      std::string difference;
      try {
        OpenJob saved = load_job(root);
        difference = jobs::spec_difference(saved.spec, wanted);
        if (difference.empty()) {
          // What may differ (the output's place, the device, the decoder) is taken from this command.
          static_cast<jobs::RunSpec&>(saved.spec) = wanted;
          return saved;
        }
      } catch (const Error& e) {
        // A damaged job folder (Input) is refused with its line; --restart plans it again.
        if (!o.restart || e.kind() != ErrorKind::Input) throw;
        difference = e.what();
      }
      if (!o.restart || attempt > 0)
        throw Error(ErrorKind::Usage, str(root.string(), ": ", difference,
                                          "; add --restart to discard its finished segments and start over"));
      log::warn(root.string(), ": ", difference, "; starting over (--restart)");
      std::error_code ec;
      fs::remove_all(root, ec);
      if (ec) throw Error(ErrorKind::Output, str(root.string(), ": cannot clear the job folder (", ec.message(), ")"));
    }
    if (create_job(dir, wanted)) {
      try {
        return OpenJob{dir, wanted, ensure_plan(dir, wanted)};
      } catch (const Error&) {
        // An input that cannot be planned leaves no job behind for the corrected command to trip
        // on: job.json goes, then the folders create() made, each only if empty (a --job-dir
        // folder may hold the user's files).
        std::error_code ec;
        fs::remove(dir.spec_file(), ec);
        for (const fs::path& p : {dir.root() / "segments", dir.journal_dir(), dir.claims_dir(), dir.temp_dir(), dir.root()})
          fs::remove(p, ec);
        throw;
      }
    }
  }
}

// The journal's finished segments that belong to the plan: a stray record (a segment number the
// plan does not have, copied in from another job) must not count towards "all done".
std::map<int, jobs::SegmentRecord> finished_in_plan(const jobs::Journal& journal, const OpenJob& job, bool verify) {
  auto done = journal.finished(verify);
  std::erase_if(done, [&](const auto& kv) { return kv.first < 0 || kv.first >= int(job.plan.segments.size()); });
  return done;
}

// Keeps this worker's claims fresh while it works, so that other workers can tell it is alive.
class Heartbeat {
 public:
  Heartbeat(jobs::SegmentClaims& claims, std::chrono::seconds stale_after)
      : claims_(claims),
        period_(std::max<std::chrono::milliseconds>(std::chrono::milliseconds(500), stale_after / 4)),
        thread_([this] { loop(); }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period_, [&] { return stop_; })) claims_.heartbeat();
  }
  jobs::SegmentClaims& claims_;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

struct ClaimGuard {
  jobs::SegmentClaims& claims;
  int index;
  ~ClaimGuard() { claims.release(index); }
};

// What all workers of this process share.
struct Shared {
  Shared(const JobOptions& o, const OpenJob& j, DiskForecast d)
      : options(o), job(j), disk(d), journal(j.dir), counters(o.counters ? *o.counters : own_counters) {}
  const JobOptions& options;
  const OpenJob& job;
  const DiskForecast disk;  // the output's size before a segment measures it
  jobs::Journal journal;
  ProgressCounters own_counters;
  ProgressCounters& counters;
  std::atomic<int> done_now{0};
  std::atomic<int64_t> frames_in{0}, frames_out{0}, decode_errors{0};
  std::atomic<bool> failed{false};
  // Whether the disk was checked with a finished segment's real size (not only the forecast).
  std::atomic<bool> disk_checked_measured{false};
};

// Whether this process writes the output (a shard worker leaves it to the assemble step).
bool assembles(const JobOptions& o) { return o.assemble && !o.selection.sharded(); }

// One warning line when what is left of the job does not fit in the free space where it goes.
// Returns whether the check used finished segments' real sizes.
bool warn_if_disk_short(const JobOptions& o, const OpenJob& job, const DiskForecast& forecast,
                        const std::map<int, jobs::SegmentRecord>& done) {
  const DiskNeed need = disk_need(job.plan, done, forecast, o.selection, assembles(o));
  if (!need.known) return false;
  const DiskCheck check = check_disk(need, job.dir.root(), o.run.output);
  if (check.short_by() > 0)
    log::warn("not enough disk space: ", describe(check), ", short by ", human_bytes(check.short_by()),
              need.measured ? " (sized by the finished segments)" : " (estimated: the first segment will tell)");
  return need.measured;
}

// `e`, a write that found the disk full, with how much more the job needs there and how to go on;
// without the job (its job.json or plan.json could not be written), the free space alone.
Error disk_full_error(const Error& e, const JobOptions& o, const DiskForecast& forecast, const OpenJob* job,
                      const fs::path& dir) {
  DiskNeed need;
  if (job) need = disk_need(job->plan, finished_in_plan(jobs::Journal(job->dir), *job, false), forecast, o.selection, assembles(o));
  const DiskCheck check = check_disk(need, dir, o.run.output);
  const std::string amount = need.known ? describe(check) : str(check.folder, " has ", human_bytes(check.free_bytes), " free");
  const std::string by = check.short_by() > 0 ? str(", short by ", human_bytes(check.short_by())) : "";
  return Error(e.kind(), str(e.what(), "; ", amount, by, ": make room and run the same command again",
                             job ? " to resume (finished segments are kept)" : ""));
}

// The run every segment of one worker makes: the job's, on the worker's device, quiet.
RunOptions worker_run(const JobOptions& o, const std::string& device) {
  RunOptions run = o.run;
  if (!device.empty()) run.stage_defaults["device"] = device;
  run.overwrite = true;
  run.progress = ProgressMode::None;
  return run;
}

// A segment's part file in the job's temp folder, named for this process and worker so that two
// workers that both believe they hold a segment never write the same file.
fs::path part_file(const OpenJob& job, int index, const std::string& worker) {
  return job.dir.temp_dir() / (jobs::segment_name(index) + "." + std::to_string(::getpid()) + "." +
                               std::to_string(std::hash<std::string>{}(worker) % 100000) + ".mkv");
}

// Segment `seg` run, decoding from the start when the input cannot seek precisely.
RunReport run_segment(const OpenJob& job, const JobOptions& o, RunOptions run, const RunContext& context,
                      const jobs::Segment& seg) {
  run.window = SegmentWindow{&job.plan, seg.index, true, wants_global_header(o.run)};
  try {
    return run_pipeline(run, context);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Input || std::string(e.what()).find("landed after") == std::string::npos) throw;
    log::info("segment ", seg.index, ": the input cannot seek precisely; decoding from the start");
    run.window->seek = false;
    return run_pipeline(run, context);
  }
}

jobs::SegmentRecord record_of(int index, RunReport& report, double seconds, const std::string& worker) {
  jobs::SegmentRecord record;
  record.index = index;
  record.frames_in = report.frames_in;
  record.frames_out = report.frames_out;
  record.seconds = seconds;
  record.worker = worker;
  record.time_base_num = report.encoder_time_base.num;
  record.time_base_den = report.encoder_time_base.den;
  record.packets = std::move(report.packet_times);
  return record;
}

// Runs the claimed segment `seg` and commits it to the journal. false: another worker took it
// over while this one stalled, and this copy is dropped.
bool do_segment(Shared& shared, jobs::SegmentClaims& claims, const RunOptions& base, const RunContext& context,
                const jobs::Segment& seg) {
  RunOptions run = base;
  run.output = part_file(shared.job, seg.index, claims.worker());
  const auto start = Clock::now();
  RunReport report = run_segment(shared.job, shared.options, run, context, seg);
  if (report.frames_in != seg.frames)
    log::warn("segment ", seg.index, ": ", report.frames_in, " of ", seg.frames, " input frames decoded");
  if (!claims.holds(seg.index)) {
    log::warn("segment ", seg.index, ": taken over by ", claims.holder(seg.index), " while this worker stalled; dropping this copy");
    std::error_code ec;
    fs::remove(run.output, ec);
    return false;
  }
  const jobs::SegmentRecord record =
      record_of(seg.index, report, std::chrono::duration<double>(Clock::now() - start).count(), claims.worker());
  shared.journal.commit(record, run.output);
  // The first segment's real size replaces the forecast the start was checked with.
  if (!shared.disk_checked_measured.exchange(true))
    warn_if_disk_short(shared.options, shared.job, shared.disk, finished_in_plan(shared.journal, shared.job, false));
  ++shared.done_now;
  shared.frames_in += report.frames_in;
  shared.frames_out += report.frames_out;
  shared.decode_errors += report.decode_errors;
  log::debug("segment ", seg.index, " done: ", report.frames_out, " frames in ", record.seconds, " s");
  return true;
}

// One worker: takes unfinished segments of its selection until none is left, waiting for
// segments other workers hold (they finish them, or die and their claims go stale).
void work(Shared& shared, const std::string& device) {
  const OpenJob& job = shared.job;
  const JobOptions& o = shared.options;
  jobs::SegmentClaims claims(job.dir, jobs::make_worker_id(), o.claim_stale_after);
  Heartbeat heartbeat(claims, o.claim_stale_after);
  const RunOptions base = worker_run(o, device);
  WarmStages warm;
  const RunContext context{&shared.counters, nullptr, o.warm_segments ? &warm : nullptr};
  const int total = int(job.plan.segments.size());
  for (;;) {
    throw_if_stop_requested();
    if (shared.failed) return;
    // Another worker assembled the output and removed the job's own folder: nothing is left.
    if (!job.dir.exists()) return;
    const std::map<int, jobs::SegmentRecord> done = shared.journal.finished(false);
    bool left = false, took = false;
    for (const jobs::Segment& seg : job.plan.segments) {
      if (!o.selection.includes(seg.index, total) || done.count(seg.index)) continue;
      left = true;
      if (!claims.try_claim(seg.index)) continue;
      ClaimGuard guard{claims, seg.index};
      if (shared.journal.finished(seg.index, false)) continue;  // just finished by another worker
      took = true;
      do_segment(shared, claims, base, context, seg);
      break;  // list again: other workers move on too
    }
    if (!left) return;
    if (!took) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

int count_done(const jobs::Journal& journal, const OpenJob& job, const jobs::SegmentSelection* selection) {
  const auto done = journal.finished(false);
  int n = 0;
  for (const jobs::Segment& s : job.plan.segments)
    if (done.count(s.index) && (!selection || selection->includes(s.index, int(job.plan.segments.size())))) ++n;
  return n;
}

// The job's own folder goes when its output is assembled; gone while this worker was working, it
// means another worker assembled it, unless the output is missing too (someone removed the folder).
void check_folder_went_with_assembly(const fs::path& dir, const fs::path& output) {
  std::error_code ec;
  if (!fs::exists(output, ec))
    throw Error(ErrorKind::Output, str(dir.string(), ": the job folder was removed while this run worked and there is no ",
                                       output.string(), "; run the command again to start over"));
  log::info(output.string(), ": assembled by another worker, which removed the job folder");
}

// Whether the file at the output is the one an assembly of this job made (assembled.json).
bool assembled_already(const OpenJob& job) {
  const std::optional<FileIdentity> now = file_identity(job.spec.output);
  if (!now) return false;
  std::ifstream in(job.dir.assembled_file());
  const nlohmann::json made = nlohmann::json::parse(in, nullptr, false);
  if (!made.is_object() || !made.contains("device") || !made.contains("inode")) return false;
  return made["device"] == now->device && made["inode"] == now->inode;
}

// Assembles unless another worker did or is doing it. Workers that finish together race for the
// assembly claim; one that comes after the assembler finds assembled.json naming the file at the
// output and leaves it be (assembling again would see a file that appeared meanwhile, not ours).
// `replaceable`: what was at the output when this run started, checked against -y then.
// `again`: assemble even when assembled already (`framelift assemble -y` asks for it).
enum class Assembly { Done, FoundDone, LeftToOthers };
Assembly assemble_once(const OpenJob& job, const std::map<int, jobs::SegmentRecord>& done,
                   std::optional<FileIdentity> replaceable, bool again = false) {
  if (!job.dir.exists()) {
    check_folder_went_with_assembly(job.dir.root(), job.spec.output);
    return Assembly::LeftToOthers;
  }
  jobs::SegmentClaims claims(job.dir, jobs::make_worker_id(), std::chrono::seconds(600));
  if (!claims.try_claim(jobs::kAssembleClaim)) {
    log::info("another worker (", claims.holder(jobs::kAssembleClaim), ") is assembling ", job.spec.output);
    return Assembly::LeftToOthers;
  }
  ClaimGuard guard{claims, jobs::kAssembleClaim};
  if (!again && assembled_already(job)) {
    // With the claim held no assembler is at work: one that died after its rename left the folder.
    log::info(job.spec.output.string(), ": assembled already by another worker of this job");
    return Assembly::FoundDone;
  }
  jobs::AssembleReport report = jobs::assemble_segments(job.dir, job.spec, job.plan, done, replaceable);
  // Check what is on disk before anything (a hook, a shutdown) trusts it.
  const int64_t frames = jobs::count_video_packets(report.output);
  if (frames != report.video_frames) {
    std::error_code ec;
    fs::remove(job.dir.assembled_file(), ec);  // no later worker may take this output for done
    throw Error(ErrorKind::Output, str(report.output.string(), ": holds ", frames, " frames after assembly, expected ", report.video_frames));
  }
  log::info("assembled ", report.output.string(), ": ", report.video_frames, " frames from ", report.segments,
            " segment(s), ", report.other_packets, " packets of other streams copied");
  return Assembly::Done;
}

JobReport process_job(const JobOptions& o);

// The frames the journal records for the whole job, or -1 while a segment is missing.
int64_t recorded_frames(const OpenJob& job) {
  const auto done = finished_in_plan(jobs::Journal(job.dir), job, false);
  if (done.size() != job.plan.segments.size()) return -1;
  int64_t frames = 0;
  for (const auto& [index, record] : done) frames += record.frames_out;
  return frames;
}

// A run killed after its output's rename and before it removed its own job folder left a
// complete output that assembled.json names (jobs/assemble.h). The same command finishes that
// job: it checks the output's frames and removes the folder, where it would otherwise refuse the
// output as taken. nullopt when there is no such job (a folder named with --job-dir is kept on
// purpose: its output stays refused without -y, as before).
std::optional<JobReport> finish_assembled_job(const JobOptions& o, const fs::path& dir) {
  if (o.prepare_only || !o.assemble || o.selection.sharded() || !o.job_dir.empty() || o.keep_job_dir) return std::nullopt;
  std::error_code ec;
  if (!fs::exists(jobs::JobDir(dir).assembled_file(), ec)) return std::nullopt;
  std::optional<OpenJob> job;
  try {
    job = load_job(dir);
    job->spec.output = fs::absolute(o.run.output);
    if (!assembled_already(*job) || !jobs::spec_difference(job->spec, spec_of(o)).empty()) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // the usual path says what is wrong
  }
  const int64_t frames = recorded_frames(*job);
  if (frames < 0 || jobs::count_video_packets(job->spec.output) != frames) return std::nullopt;
  log::info(job->spec.output.string(), ": assembled by an earlier run of this job (", frames, " frames), which stopped before ",
            "removing ", dir.string());
  fs::remove_all(dir, ec);
  JobReport report;
  report.job_dir = dir;
  report.segments = report.done_before = int(job->plan.segments.size());
  report.assembled = true;
  return report;
}

}  // namespace

std::string JobReport::summary() const {
  std::string s = str(done_now, " segment(s) processed this run (", frames_in, " input -> ", frames_out, " frames, ",
                      seconds, " s)");
  if (done_before) s += str(", ", done_before, " finished earlier");
  if (remaining) s += str(", ", remaining, " of ", segments, " left for other workers");
  if (assembled) s += ", output assembled";
  return s;
}

JobReport run_job(const JobOptions& o) {
  std::optional<lifecycle::PreemptionWatcher> watcher;
  if (o.lifecycle.watch_preemption != lifecycle::WatchProvider::Off && !o.prepare_only) {
    // Handled like SIGTERM: the segment in flight is dropped, the finished ones kept.
    lifecycle::PreemptionWatchOptions watch;
    watch.provider = o.lifecycle.watch_preemption;
    watch.interval = o.lifecycle.watch_interval;
    watcher.emplace(watch, [](const lifecycle::PreemptionNotice&) { request_stop("the cloud provider reclaims this machine"); });
  }
  lifecycle::HookContext hook;
  hook.output = o.run.output;
  hook.job_dir = o.job_dir.empty() ? jobs::JobDir::default_for(o.run.output) : o.job_dir;
  JobReport report;
  try {
    report = process_job(o);
  } catch (const Error& e) {
    if (!o.prepare_only) {
      hook.outcome = e.kind() == ErrorKind::Interrupted ? lifecycle::JobOutcome::Interrupted : lifecycle::JobOutcome::Failed;
      hook.error = e.what();
      lifecycle::run_job_hook(o.lifecycle, hook);
    }
    throw;
  }
  if (o.prepare_only) return report;
  if (report.remaining == 0 || o.selection.sharded()) lifecycle::run_job_hook(o.lifecycle, hook);
  if (o.lifecycle.shutdown_when_done) {
    if (report.assembled) lifecycle::run_shutdown_command(lifecycle::resolve_shutdown_command(o.lifecycle));
    else log::info("--shutdown-when-done: not shutting down, this run did not assemble the output");
  }
  return report;
}

namespace {

// What would make the job fail at its end, checked before hours are spent on it: the input opens
// and has video, the output can be written there, its container can hold the source's other
// streams.
void preflight(const RunOptions& run, bool will_assemble) {
  RunOptions checked = run;
  if (!will_assemble) checked.overwrite = true;  // a shard worker does not write the output
  check_output_path(checked);
  if (media::is_stream_file(run.input))
    throw Error(ErrorKind::Usage, str(run.input, ": is a FIFO or device, readable only once, and a job reads its input "
                                                 "once per segment; add --no-job for one plain pass"));
  media::Demuxer demux(run.input);
  if (!will_assemble) return;
  media::Muxer probe(run.output, run.container);  // removes its empty temporary file
  probe.check_holds_video(media::find_video_encoder(run.encoder.codec));
  for (unsigned i = 0; i < demux.format()->nb_streams; ++i) {
    const AVStream* st = demux.format()->streams[i];
    if (int(i) != demux.video_index() && st->codecpar->codec_id != AV_CODEC_ID_NONE) probe.add_copy(st);
  }
}

// The counters a resumed job starts from: what its finished segments did before.
void count_earlier_work(Shared& shared, const std::map<int, jobs::SegmentRecord>& done) {
  int64_t done_frames = 0;
  double earlier_seconds = 0;
  for (const auto& [index, record] : done) done_frames += record.frames_in, earlier_seconds += record.seconds;
  shared.counters.total_in = shared.job.plan.total_frames();
  shared.counters.frames_in = done_frames;
  shared.counters.start_in = done_frames;
  shared.counters.earlier_seconds = earlier_seconds;
  shared.counters.hourly_price = shared.options.lifecycle.hourly_price.value_or(0);
}

// One worker thread per device (one on the default device without --devices); the first failure.
std::exception_ptr run_workers(Shared& shared) {
  const std::vector<std::string>& listed = shared.options.devices;
  const std::vector<std::string> devices = listed.empty() ? std::vector<std::string>{""} : listed;
  std::vector<std::thread> workers;
  std::mutex error_mutex;
  std::exception_ptr error;
  const CancelFlag* cancel = current_cancel_flag();
  for (const std::string& device : devices) {
    workers.emplace_back([&, device] {
      CancelScope cancelling(cancel);
      try {
        work(shared, device);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        shared.failed = true;
      }
    });
  }
  for (auto& t : workers) t.join();
  return error;
}

// A worker's failure, rethrown: a stop says what is kept and how to resume. A job that failed
// before finishing anything leaves nothing behind (a typo in an option must not leave a folder
// that the corrected command then refuses as a different job).
[[noreturn]] void fail_job(std::exception_ptr error, Shared& shared, bool created, const JobReport& report) {
  const fs::path& dir = report.job_dir;
  std::error_code ec;
  // A full disk's line is sized while the folder is still there.
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    if (says_disk_full(e.what()))
      error = std::make_exception_ptr(disk_full_error(e, shared.options, shared.disk, &shared.job, dir));
  } catch (...) {
  }
  const bool removed = created && shared.journal.finished(false).empty() && fs::remove_all(dir, ec) > 0;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Interrupted) throw;
    if (removed) throw Error(ErrorKind::Interrupted, str(e.what(), ": no segment was finished; run the same command again"));
    const int finished = count_done(shared.journal, shared.job, nullptr);
    throw Error(ErrorKind::Interrupted, str(e.what(), ": ", finished, " of ", report.segments, " segment(s) finished and kept in ",
                                            dir.string(), "; run the same command again to resume"));
  }
}

// With every segment done, the output assembled (unless another worker does it) and the job's
// own folder removed.
void assemble_when_done(const JobOptions& o, const OpenJob& job, Shared& shared, JobReport& report,
                        const std::optional<FileIdentity>& replaceable) {
  const auto finished = finished_in_plan(shared.journal, job, false);
  report.remaining = report.segments - int(finished.size());
  if (report.remaining != 0 || !o.assemble) return;
  const bool own_folder = o.job_dir.empty() && !o.keep_job_dir && !o.selection.sharded();
  std::error_code ec;
  int64_t frames_out = 0;
  for (const auto& [index, record] : finished) frames_out += record.frames_out;
  if (frames_out == 0) {
    // Nothing to assemble and nothing worth resuming: the pipeline itself must change.
    if (own_folder) fs::remove_all(report.job_dir, ec);
    throw Error(ErrorKind::Usage, str(o.run.input, ": the pipeline made no frames (a stage dropped every one, e.g. a select filter)"));
  }
  const Assembly assembly = assemble_once(job, finished, replaceable);
  report.assembled = assembly == Assembly::Done;
  if (assembly != Assembly::LeftToOthers && own_folder) fs::remove_all(report.job_dir, ec);
}

JobReport process_job(const JobOptions& o) {
  const auto start = Clock::now();
  const fs::path dir = o.job_dir.empty() ? jobs::JobDir::default_for(o.run.output) : o.job_dir;
  if (std::optional<JobReport> finished = finish_assembled_job(o, dir)) return *finished;
  preflight(o.run, o.assemble);
  // -y was checked just now against this file; assembly, maybe hours later, replaces only it.
  const std::optional<FileIdentity> replaceable = file_identity(o.run.output);
  const bool created = !jobs::JobDir(dir).exists();
  const OpenJob job = [&] {
    try {
      return open_or_create(o, dir);
    } catch (const Error& e) {
      if (says_disk_full(e.what())) throw disk_full_error(e, o, {}, nullptr, dir);  // job.json or plan.json
      throw;
    }
  }();
  JobReport report;
  report.job_dir = dir;
  report.segments = int(job.plan.segments.size());
  if (o.prepare_only) {
    log::info("prepared ", dir.string(), ": ", report.segments, " segment(s) of ", job.plan.total_frames(), " frames");
    return report;
  }

  // Asked only now that the input is known to be a file a job can read (a FIFO would block).
  Shared shared(o, job, o.disk_forecast ? o.disk_forecast() : DiskForecast{});
  // Resuming re-reads every finished segment once: a damaged one is redone, not assembled.
  const auto done = finished_in_plan(shared.journal, job, true);
  report.done_before = int(done.size());
  count_earlier_work(shared, done);
  if (report.done_before)
    log::info("resuming ", dir.string(), ": ", report.done_before, " of ", report.segments, " segment(s) already done");
  shared.disk_checked_measured = warn_if_disk_short(o, job, shared.disk, done);
  {
    ProgressReporter progress(o.progress, shared.counters);
    if (std::exception_ptr error = run_workers(shared)) fail_job(error, shared, created, report);
    progress.finish();
  }
  report.done_now = shared.done_now;
  report.frames_in = shared.frames_in;
  report.frames_out = shared.frames_out;
  report.decode_errors = shared.decode_errors;
  if (!job.dir.exists()) {
    check_folder_went_with_assembly(dir, o.run.output);
  } else {
    try {
      assemble_when_done(o, job, shared, report, replaceable);
    } catch (const Error& e) {
      if (says_disk_full(e.what())) throw disk_full_error(e, o, shared.disk, &job, dir);
      throw;
    }
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace

RunOptions load_job_run_options(const fs::path& job_dir, int64_t* segment_frames) {
  const OpenJob job = load_job(job_dir);
  RunOptions r;
  static_cast<jobs::RunSpec&>(r) = job.spec;
  if (segment_frames) *segment_frames = job.spec.segment_frames;
  return r;
}

JobState job_state(const fs::path& job_dir) {
  const OpenJob job = load_job(job_dir);
  return {job.spec.output, int(job.plan.segments.size()), int(finished_in_plan(jobs::Journal(job.dir), job, false).size())};
}

fs::path assemble_job(const fs::path& job_dir, bool overwrite, std::chrono::seconds wait) {
  const OpenJob job = load_job(job_dir);
  std::error_code ec;
  if (fs::exists(job.spec.output, ec) && !overwrite)
    throw Error(ErrorKind::Output, str(job.spec.output, ": already exists (use -y to overwrite)"));
  const std::optional<FileIdentity> replaceable = file_identity(job.spec.output);
  if (jobs::fingerprint_input(job.spec.input) != job.spec.input_fingerprint)
    throw Error(ErrorKind::Input, str(job.spec.input, ": changed since the job started; its audio would not match"));
  jobs::Journal journal(job.dir);
  const auto deadline = Clock::now() + wait;
  while (int(finished_in_plan(journal, job, false).size()) < int(job.plan.segments.size()) && Clock::now() < deadline) {
    throw_if_stop_requested();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (assemble_once(job, finished_in_plan(journal, job, true), replaceable, true) != Assembly::Done)
    throw Error(ErrorKind::Usage, str(job_dir.string(), ": another worker is assembling this job"));
  return job.spec.output;
}

}  // namespace framelift::pipeline
