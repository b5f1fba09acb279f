// `framelift deploy slurm|k8s`: scripts and manifests that run a prepared job on a cluster.
// A client of framelift/deploy.h; this file parses options and reports what was written.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "framelift/deploy.h"
#include "util/str.h"

namespace framelift::cli {
namespace {

struct DeployArgs {
  SlurmDeployRequest slurm;
  K8sDeployRequest k8s;
};

// What was written and how to start it; the exit code.
int report(const DeployResult& r, const std::string& how) {
  std::string text;
  for (const auto& f : r.files) text += str("wrote ", f, "\n");
  text += str(how, ":\n  ", r.command, "\n");
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

template <class Request>
void add_shared_options(CLI::App* cmd, Request& q) {
  cmd->add_option("--job-dir", q.job_dir, "The prepared job folder, on storage every worker mounts at the same path")->required();
  cmd->add_option("-n,--workers", q.workers, "Workers; worker K processes shard K of N")->required();
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
  auto& s = a->slurm;
  add_shared_options(slurm, s);
  slurm->add_option("--framelift", s.framelift, "framelift on the nodes (default: this program)");
  slurm->add_option("--container", s.container, "Run framelift from this Apptainer image instead (apptainer exec --nv)");
  slurm->add_option("--partition", s.partition, "Partition (default: the cluster's)");
  slurm->add_option("--gpus", s.gpus, "GPUs per task, as --gres=gpu:N; 0 for none")->capture_default_str();
  slurm->add_option("--gpu-type", s.gpu_type, "GPU type in --gres=gpu:TYPE:N, e.g. a100");
  slurm->add_option("--time", s.time_limit, "Time limit per task")->capture_default_str();
  slurm->add_option("--mem", s.memory, "Memory per task, e.g. 32G (default: the partition's)");
  slurm->add_option("--cpus", s.cpus, "CPUs per task (default: the partition's)");
  slurm->add_option("--max-running", s.max_running, "At most this many tasks at once (default: all)");
  slurm->add_option("--sbatch", s.extra, "More #SBATCH options for both jobs, e.g. --sbatch=--account=vfx (repeatable)");
  slurm->add_option("--name", s.job_name, "Job name (default: framelift-FOLDER)");
  slurm->callback([a, &selected] { selected = [a] { return report(deploy_slurm(a->slurm), "submit with"); }; });

  auto* k8s = cmd->add_subcommand("k8s", "An Indexed Job of N pods and an assembly Job (D/deploy/k8s)");
  auto& k = a->k8s;
  add_shared_options(k8s, k);
  k8s->add_option("--image", k.image, "Container image with framelift")->required();
  k8s->add_option("--pvc", k.pvc, "The shared (ReadWriteMany) PersistentVolumeClaim that holds the job, input and output")->required();
  k8s->add_option("--mount-path", k.mount_path, "Where pods mount the claim (default: the folder holding the job, input and output)");
  k8s->add_option("--framelift", k.framelift, "framelift inside the image")->capture_default_str();
  k8s->add_option("--namespace", k.namespace_name, "Namespace (default: kubectl's current one)");
  k8s->add_option("--gpus", k.gpus, "GPUs per worker pod; 0 for none")->capture_default_str();
  k8s->add_option("--gpu-resource", k.gpu_resource, "GPU resource name")->capture_default_str();
  k8s->add_option("--cpus", k.cpu, "CPUs per worker pod, requested and limit, e.g. 8");
  k8s->add_option("--mem", k.memory, "Memory per worker pod, requested and limit, e.g. 32Gi");
  k8s->add_option("--retries", k.retries, "Failed pods tolerated per worker index")->capture_default_str();
  k8s->add_option("--assemble-wait", k.assemble_wait_s, "Seconds the assembly Job waits for the workers")->capture_default_str();
  k8s->add_option("--name", k.name, "Job name (default: framelift-FOLDER)");
  k8s->callback([a, &selected] { selected = [a] { return report(deploy_k8s(a->k8s), "apply with"); }; });
}

}  // namespace framelift::cli
