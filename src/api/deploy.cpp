// framelift/deploy.h over src/deploy's generators: the prepared job read once, warnings for what
// would break the workers, the files written, the command that starts them.
#include "framelift/deploy.h"

#include <filesystem>

#include "deploy/deploy_file.h"
#include "deploy/k8s.h"
#include "deploy/prepared_job.h"
#include "deploy/quote.h"
#include "deploy/slurm.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift {
namespace {

// The job as the workers will see it; what would break them is logged and kept in `warnings`.
deploy::PreparedJob prepared(const fs::path& job_dir, int workers, std::vector<std::string>& warnings) {
  deploy::PreparedJob job = deploy::read_prepared_job(job_dir);
  if (job.input.find("://") == std::string::npos && !fs::path(job.input).is_absolute())
    warnings.push_back(str(job_dir.string(), "/job.json: the input '", job.input,
                           "' is relative; workers start in other folders and may not find it"));
  if (job.segments > 0 && workers > job.segments)
    warnings.push_back(str(workers, " workers for ", job.segments, " segments: ", workers - job.segments, " will have nothing to do"));
  for (const std::string& w : warnings) log::warn(w);
  return job;
}

std::vector<std::string> written(const std::vector<deploy::DeployFile>& files) {
  deploy::write_deploy_files(files);
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.path.string());
  return paths;
}

fs::path this_program() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("framelift") : self;
}

// The command a node runs: the program itself, or it inside the container with the shared
// folder bound at the same path.
std::vector<std::string> node_command(const SlurmDeployRequest& q, const fs::path& job_dir, const deploy::PreparedJob& job) {
  if (!q.container.empty() && !q.framelift.empty())
    throw Error(ErrorKind::Usage, "--container and --framelift: give one (the container brings its own framelift)");
  if (q.container.empty()) return {q.framelift.empty() ? this_program().string() : q.framelift};
  std::vector<std::string> command = {"apptainer", "exec"};
  if (q.gpus > 0) command.push_back("--nv");
  const fs::path shared = deploy::shared_folder(job_dir, job);
  if (shared != "/") command.insert(command.end(), {"--bind", shared.string()});
  command.insert(command.end(), {q.container, "framelift"});
  return command;
}

}  // namespace

DeployResult deploy_slurm(const SlurmDeployRequest& q) {
  DeployResult r;
  const fs::path job_dir = fs::absolute(q.job_dir).lexically_normal();
  const deploy::PreparedJob job = prepared(job_dir, q.workers, r.warnings);
  deploy::SlurmOptions o;
  o.job_dir = job_dir;
  o.workers = q.workers;
  o.framelift = node_command(q, job_dir, job);
  o.partition = q.partition;
  o.gpus = q.gpus;
  o.gpu_type = q.gpu_type;
  o.time_limit = q.time_limit;
  o.memory = q.memory;
  o.cpus = q.cpus;
  o.max_running = q.max_running;
  o.extra = q.extra;
  o.job_name = q.job_name;
  r.files = written(deploy::slurm_files(o));
  r.command = deploy::shell_quote((deploy::slurm_dir(job_dir) / "submit.sh").string());
  return r;
}

DeployResult deploy_k8s(const K8sDeployRequest& q) {
  DeployResult r;
  const fs::path job_dir = fs::absolute(q.job_dir).lexically_normal();
  const deploy::PreparedJob job = prepared(job_dir, q.workers, r.warnings);
  deploy::K8sOptions o;
  o.job_dir = job_dir;
  o.workers = q.workers;
  o.mount_path = q.mount_path.empty() ? deploy::shared_folder(job_dir, job) : fs::path(q.mount_path);
  if (o.mount_path == "/")
    throw Error(ErrorKind::Usage, "--mount-path: the job folder, input and output share no folder but /; give the claim's mount path");
  o.image = q.image;
  o.framelift = q.framelift;
  o.namespace_name = q.namespace_name;
  o.pvc = q.pvc;
  o.gpus = q.gpus;
  o.gpu_resource = q.gpu_resource;
  o.cpu = q.cpu;
  o.memory = q.memory;
  o.retries = q.retries;
  o.assemble_wait_s = q.assemble_wait_s;
  o.name = q.name;
  r.files = written(deploy::k8s_files(o));
  const fs::path dir = deploy::k8s_dir(job_dir);
  r.command = str("kubectl apply -f ", deploy::shell_quote((dir / "job.yaml").string()), " -f ",
                  deploy::shell_quote((dir / "assemble.yaml").string()));
  return r;
}

}  // namespace framelift
