// `framelift deploy slurm|k8s`: scripts and manifests that run a prepared job on a cluster.
// The generators are in src/deploy; this file parses options and reports what it wrote.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "deploy/deploy_file.h"
#include "deploy/k8s.h"
#include "deploy/prepared_job.h"
#include "deploy/quote.h"
#include "deploy/slurm.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::cli {
namespace {

struct DeployArgs {
  std::string job_dir;
  int workers = 0;
  deploy::SlurmOptions slurm;
  std::string framelift, container;
  deploy::K8sOptions k8s;
  std::string mount_path;
};

// The job as the workers will see it, with warnings for what would break them.
deploy::PreparedJob prepared(const fs::path& job_dir, int workers) {
  deploy::PreparedJob job = deploy::read_prepared_job(job_dir);
  if (job.input.find("://") == std::string::npos && !fs::path(job.input).is_absolute())
    log::warn(job_dir.string(), "/job.json: the input '", job.input, "' is relative; workers start in other folders and may not find it");
  if (job.segments > 0 && workers > job.segments)
    log::warn(workers, " workers for ", job.segments, " segments: ", workers - job.segments, " will have nothing to do");
  return job;
}

void report(const std::vector<deploy::DeployFile>& files, const std::string& how) {
  std::string text;
  for (const auto& f : files) text += str("wrote ", f.path.string(), "\n");
  text += how;
  std::fwrite(text.data(), 1, text.size(), stdout);
}

fs::path this_program() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("framelift") : self;
}

int deploy_slurm(DeployArgs& a) {
  fs::path job_dir = fs::absolute(a.job_dir).lexically_normal();
  deploy::PreparedJob job = prepared(job_dir, a.workers);
  deploy::SlurmOptions& o = a.slurm;
  o.job_dir = job_dir;
  o.workers = a.workers;
  if (!a.container.empty() && !a.framelift.empty())
    throw Error(ErrorKind::Usage, "--container and --framelift: give one (the container brings its own framelift)");
  if (!a.container.empty()) {
    o.framelift = {"apptainer", "exec"};
    if (o.gpus > 0) o.framelift.push_back("--nv");
    fs::path shared = deploy::shared_folder(job_dir, job);
    if (shared != "/") o.framelift.insert(o.framelift.end(), {"--bind", shared.string()});
    o.framelift.insert(o.framelift.end(), {a.container, "framelift"});
  } else {
    o.framelift = {a.framelift.empty() ? this_program().string() : a.framelift};
  }
  auto files = deploy::slurm_files(o);
  deploy::write_deploy_files(files);
  report(files, str("submit with:\n  ", deploy::shell_quote((deploy::slurm_dir(job_dir) / "submit.sh").string()), "\n"));
  return 0;
}

int deploy_k8s(DeployArgs& a) {
  fs::path job_dir = fs::absolute(a.job_dir).lexically_normal();
  deploy::PreparedJob job = prepared(job_dir, a.workers);
  deploy::K8sOptions& o = a.k8s;
  o.job_dir = job_dir;
  o.workers = a.workers;
  o.mount_path = a.mount_path.empty() ? deploy::shared_folder(job_dir, job) : fs::path(a.mount_path);
  if (o.mount_path == "/")
    throw Error(ErrorKind::Usage, "--mount-path: the job folder, input and output share no folder but /; give the claim's mount path");
  auto files = deploy::k8s_files(o);
  deploy::write_deploy_files(files);
  fs::path dir = deploy::k8s_dir(job_dir);
  report(files, str("apply with:\n  kubectl apply -f ", deploy::shell_quote((dir / "job.yaml").string()), " -f ",
                    deploy::shell_quote((dir / "assemble.yaml").string()), "\n"));
  return 0;
}

void add_shared_options(CLI::App* cmd, DeployArgs& a) {
  cmd->add_option("--job-dir", a.job_dir, "The prepared job folder, on storage every worker mounts at the same path")->required();
  cmd->add_option("-n,--workers", a.workers, "Workers; worker K processes shard K of N")->required();
}

}  // namespace

void add_deploy_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("deploy", "Write Slurm scripts or Kubernetes manifests that run a prepared job on N workers");
  cmd->require_subcommand(1);
  cmd->footer(
      "Prepare the job first, then deploy it:\n"
      "  framelift run -i in.mkv -o out.mkv --pipeline ... --job-dir /shared/job --prepare\n"
      "  framelift deploy slurm --job-dir /shared/job -n 8 --partition gpu && /shared/job/deploy/slurm/submit.sh\n"
      "  framelift deploy k8s --job-dir /data/job -n 8 --image REPO/framelift:TAG --pvc media");
  auto a = std::make_shared<DeployArgs>();

  auto* slurm = cmd->add_subcommand("slurm", "A job array of N tasks and an assembly job that runs after it (D/deploy/slurm)");
  add_shared_options(slurm, *a);
  auto& s = a->slurm;
  slurm->add_option("--framelift", a->framelift, "framelift on the nodes (default: this program)");
  slurm->add_option("--container", a->container, "Run framelift from this Apptainer image instead (apptainer exec --nv)");
  slurm->add_option("--partition", s.partition, "Partition (default: the cluster's)");
  slurm->add_option("--gpus", s.gpus, "GPUs per task, as --gres=gpu:N; 0 for none")->capture_default_str();
  slurm->add_option("--gpu-type", s.gpu_type, "GPU type in --gres=gpu:TYPE:N, e.g. a100");
  slurm->add_option("--time", s.time_limit, "Time limit per task")->capture_default_str();
  slurm->add_option("--mem", s.memory, "Memory per task, e.g. 32G (default: the partition's)");
  slurm->add_option("--cpus", s.cpus, "CPUs per task (default: the partition's)");
  slurm->add_option("--max-running", s.max_running, "At most this many tasks at once (default: all)");
  slurm->add_option("--sbatch", s.extra, "More #SBATCH options for both jobs, e.g. --sbatch=--account=vfx (repeatable)");
  slurm->add_option("--name", s.job_name, "Job name (default: framelift-FOLDER)");
  slurm->callback([a, &selected] { selected = [a] { return deploy_slurm(*a); }; });

  auto* k8s = cmd->add_subcommand("k8s", "An Indexed Job of N pods and an assembly Job (D/deploy/k8s)");
  add_shared_options(k8s, *a);
  auto& k = a->k8s;
  k8s->add_option("--image", k.image, "Container image with framelift")->required();
  k8s->add_option("--pvc", k.pvc, "The shared (ReadWriteMany) PersistentVolumeClaim that holds the job, input and output")->required();
  k8s->add_option("--mount-path", a->mount_path, "Where pods mount the claim (default: the folder holding the job, input and output)");
  k8s->add_option("--framelift", k.framelift, "framelift inside the image")->capture_default_str();
  k8s->add_option("--namespace", k.namespace_name, "Namespace (default: kubectl's current one)");
  k8s->add_option("--gpus", k.gpus, "GPUs per worker pod; 0 for none")->capture_default_str();
  k8s->add_option("--gpu-resource", k.gpu_resource, "GPU resource name")->capture_default_str();
  k8s->add_option("--cpus", k.cpu, "CPUs per worker pod, requested and limit, e.g. 8");
  k8s->add_option("--mem", k.memory, "Memory per worker pod, requested and limit, e.g. 32Gi");
  k8s->add_option("--retries", k.retries, "Failed pods tolerated per worker index")->capture_default_str();
  k8s->add_option("--assemble-wait", k.assemble_wait_s, "Seconds the assembly Job waits for the workers")->capture_default_str();
  k8s->add_option("--name", k.name, "Job name (default: framelift-FOLDER)");
  k8s->callback([a, &selected] { selected = [a] { return deploy_k8s(*a); }; });
}

}  // namespace framelift::cli
