#include "deploy/slurm.h"

#include <sstream>

#include "deploy/checks.h"
#include "deploy/names.h"
#include "deploy/quote.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::deploy {
namespace {

// Slurm may send the warning up to 60 s early and a segment needs a moment to stop cleanly.
constexpr int kWarnSeconds = 120;

void check(const SlurmOptions& o) {
  check_job_dir(o.job_dir);
  check_workers(o.workers);
  if (o.framelift.empty() || o.framelift.front().empty()) throw Error(ErrorKind::Usage, "--framelift: empty command");
  if (!o.partition.empty()) check_token("--partition", o.partition);
  if (o.gpus < 0) throw Error(ErrorKind::Usage, str("--gpus: expected 0 or more, got ", o.gpus));
  if (!o.gpu_type.empty()) check_token("--gpu-type", o.gpu_type);
  check_token("--time", o.time_limit);
  if (!o.memory.empty()) check_token("--mem", o.memory);
  if (o.cpus < 0) throw Error(ErrorKind::Usage, str("--cpus: expected 0 or more, got ", o.cpus));
  if (o.max_running < 0) throw Error(ErrorKind::Usage, str("--max-running: expected 0 or more, got ", o.max_running));
  for (const std::string& e : o.extra) {
    check_token("--sbatch", e);
    if (e.rfind("--", 0) != 0) throw Error(ErrorKind::Usage, str("--sbatch: expected a long sbatch option such as --account=NAME, got '", e, "'"));
  }
  if (!o.job_name.empty()) check_token("--name", o.job_name);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

// Directives both jobs share: where they run and how long they may take.
void common_directives(std::ostringstream& out, const SlurmOptions& o) {
  if (!o.partition.empty()) out << "#SBATCH --partition=" << o.partition << "\n";
  out << "#SBATCH --time=" << o.time_limit << "\n";
  if (!o.memory.empty()) out << "#SBATCH --mem=" << o.memory << "\n";
  // Requeued runs append to the same log instead of replacing the first attempt's.
  out << "#SBATCH --requeue\n#SBATCH --open-mode=append\n";
  for (const std::string& e : o.extra) out << "#SBATCH " << e << "\n";
}

std::string array_script(const SlurmOptions& o, const std::string& name) {
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "# framelift workers for the job in " << o.job_dir.string() << ": array task K runs shard K of " << o.workers << ".\n"
      << "# Submit with submit.sh (it also queues the assembly), or with sbatch from this folder.\n"
      << "#SBATCH --job-name=" << name << "\n"
      << "#SBATCH --array=0-" << o.workers - 1;
  if (o.max_running > 0) out << "%" << o.max_running;
  out << "\n";
  if (o.gpus > 0) out << "#SBATCH --gres=gpu:" << (o.gpu_type.empty() ? "" : o.gpu_type + ":") << o.gpus << "\n";
  if (o.cpus > 0) out << "#SBATCH --cpus-per-task=" << o.cpus << "\n";
  common_directives(out, o);
  out << "#SBATCH --signal=B:USR1@" << kWarnSeconds << "\n"
      << "#SBATCH --output=logs/worker-%A_%a.out\n"
      << "set -u\n"
      << "job_dir=" << shell_quote(o.job_dir.string()) << "\n"
      << "shards=" << o.workers << "\n"
      << "worker=\n"
      << "warned=0\n"
      << "# USR1 reaches this shell alone, " << kWarnSeconds << " s before the time limit: stop framelift (it keeps the\n"
      << "# segments it finished) and requeue this task for the rest.\n"
      << "on_time_limit() {\n"
      << "  warned=1\n"
      << "  [ -n \"$worker\" ] && kill -TERM \"$worker\" 2>/dev/null\n"
      << "}\n"
      << "trap on_time_limit USR1\n"
      << "# On scancel or preemption Slurm signals framelift itself, once; this shell only waits for it.\n"
      << "trap : TERM\n"
      << command_line(o.framelift) << " resume --job-dir \"$job_dir\" --shard \"$SLURM_ARRAY_TASK_ID/$shards\" --no-assemble &\n"
      << "worker=$!\n"
      << "# From here on this shell ignores TERM: a trapped TERM would end the wait below early, and when\n"
      << "# framelift exits at that moment bash can lose its status (wait gives -1, seen as exit 255).\n"
      << "# framelift was started with TERM trapped, so it keeps the default action and its own handler.\n"
      << "trap '' TERM\n"
      << "# bash may run the USR1 trap between starting framelift and setting $worker: pass that warning on now.\n"
      << "[ \"$warned\" = 1 ] && kill -TERM \"$worker\" 2>/dev/null\n"
      << "# Each trapped signal ends a wait early; bash keeps the exit status for the last one.\n"
      << "while kill -0 \"$worker\" 2>/dev/null; do wait \"$worker\"; done\n"
      << "wait \"$worker\"\n"
      << "status=$?\n"
      << "if [ \"$warned\" = 1 ] && [ \"$status\" -ne 0 ]; then\n"
      << "  echo \"framelift: time limit near, requeueing array task $SLURM_ARRAY_TASK_ID (job $SLURM_JOB_ID)\" >&2\n"
      << "  scontrol requeue \"$SLURM_JOB_ID\"\n"
      << "fi\n"
      << "exit \"$status\"\n";
  return out.str();
}

std::string assemble_script(const SlurmOptions& o, const std::string& name) {
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "# Joins the finished segments of the framelift job in " << o.job_dir.string() << " into its output.\n"
      << "# submit.sh queues this to start once every array task has succeeded.\n"
      << "#SBATCH --job-name=" << name << "-assemble\n";
  common_directives(out, o);
  out << "#SBATCH --output=logs/assemble-%j.out\n"
      << "exec " << command_line(o.framelift) << " assemble --job-dir " << shell_quote(o.job_dir.string()) << "\n";
  return out.str();
}

std::string submit_script(const SlurmOptions& o) {
  std::ostringstream out;
  out << "#!/bin/sh\n"
      << "# Queues the framelift job in " << o.job_dir.string() << " on Slurm: " << o.workers << " worker task(s), then the\n"
      << "# assembly once all of them succeeded. Safe to run again after a failure: finished segments are kept.\n"
      << "set -eu\n"
      << "cd \"$(dirname -- \"$0\")\"\n"
      // Slurm opens the logs before the script runs and does not create their folder.
      << "mkdir -p logs\n"
      << "array=$(sbatch --parsable array.sbatch)\n"
      << "array=${array%%;*}\n"
      // A failed task makes afterok unsatisfiable: cancel the assembly rather than leave it pending forever.
      << "assemble=$(sbatch --parsable --dependency=\"afterok:$array\" --kill-on-invalid-dep=yes assemble.sbatch)\n"
      << "assemble=${assemble%%;*}\n"
      << "echo \"array job: $array\"\n"
      << "echo \"assemble job: $assemble\"\n"
      << "echo \"logs: $(pwd)/logs\"\n";
  return out.str();
}

}  // namespace

fs::path slurm_dir(const fs::path& job_dir) { return job_dir / "deploy" / "slurm"; }

std::vector<DeployFile> slurm_files(const SlurmOptions& options) {
  check(options);
  std::string name = options.job_name.empty() ? slurm_job_name(options.job_dir) : options.job_name;
  fs::path dir = slurm_dir(options.job_dir);
  return {
      {dir / "array.sbatch", array_script(options, name), true},
      {dir / "assemble.sbatch", assemble_script(options, name), true},
      {dir / "submit.sh", submit_script(options), true},
  };
}

}  // namespace framelift::deploy
