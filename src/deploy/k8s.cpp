#include "deploy/k8s.h"

#include <sstream>

#include "deploy/checks.h"
#include "deploy/names.h"
#include "deploy/quote.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::deploy {
namespace {

bool inside(const fs::path& path, const fs::path& folder) {
  fs::path rel = path.lexically_normal().lexically_relative(folder.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

void check(const K8sOptions& o) {
  check_job_dir(o.job_dir);
  check_workers(o.workers);
  if (o.image.empty()) throw Error(ErrorKind::Usage, "--image: required (the container image with framelift)");
  check_token("--image", o.image);
  if (o.framelift.empty()) throw Error(ErrorKind::Usage, "--framelift: empty command");
  if (o.pvc.empty()) throw Error(ErrorKind::Usage, "--pvc: required (the shared claim that holds the job folder)");
  check_token("--pvc", o.pvc);
  if (!o.mount_path.is_absolute()) throw Error(ErrorKind::Usage, str("--mount-path: must be absolute, got '", o.mount_path.string(), "'"));
  if (!inside(o.job_dir, o.mount_path))
    throw Error(ErrorKind::Usage, str("--job-dir: '", o.job_dir.string(), "' is not inside --mount-path '", o.mount_path.string(),
                                      "' (pods see the job only through the claim)"));
  if (!o.namespace_name.empty()) check_k8s_name(o.namespace_name);
  if (o.gpus < 0) throw Error(ErrorKind::Usage, str("--gpus: expected 0 or more, got ", o.gpus));
  check_token("--gpu-resource", o.gpu_resource);
  if (!o.cpu.empty()) check_token("--cpus", o.cpu);
  if (!o.memory.empty()) check_token("--mem", o.memory);
  if (o.retries < 0) throw Error(ErrorKind::Usage, str("--retries: expected 0 or more, got ", o.retries));
  if (o.assemble_wait_s < 1) throw Error(ErrorKind::Usage, str("--assemble-wait: expected 1 or more seconds, got ", o.assemble_wait_s));
  if (!o.name.empty()) check_k8s_name(o.name);
}

std::string flow_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ", ";
    out += yaml_quote(item);
  }
  return out + "]";
}

void metadata(std::ostringstream& out, const K8sOptions& o, const std::string& object, const std::string& job) {
  out << "metadata:\n"
      << "  name: " << yaml_quote(object) << "\n";
  if (!o.namespace_name.empty()) out << "  namespace: " << yaml_quote(o.namespace_name) << "\n";
  out << "  labels:\n"
      << "    app.kubernetes.io/name: framelift\n"
      << "    framelift.io/job: " << yaml_quote(job) << "\n";
}

// The pod template both Jobs share, up to the container's resources.
void pod_spec(std::ostringstream& out, const K8sOptions& o, const std::string& job, const std::string& container,
              const std::vector<std::string>& args) {
  out << "  template:\n"
      << "    metadata:\n"
      << "      labels:\n"
      << "        app.kubernetes.io/name: framelift\n"
      << "        framelift.io/job: " << yaml_quote(job) << "\n"
      << "    spec:\n"
      << "      restartPolicy: Never\n"
      // framelift stops at SIGTERM and keeps its finished segments; give it time before SIGKILL.
      << "      terminationGracePeriodSeconds: 60\n"
      << "      volumes:\n"
      << "        - name: job-storage\n"
      << "          persistentVolumeClaim:\n"
      << "            claimName: " << yaml_quote(o.pvc) << "\n"
      << "      containers:\n"
      << "        - name: " << container << "\n"
      << "          image: " << yaml_quote(o.image) << "\n"
      << "          command: " << flow_list({o.framelift}) << "\n"
      << "          args: " << flow_list(args) << "\n"
      << "          volumeMounts:\n"
      << "            - name: job-storage\n"
      << "              mountPath: " << yaml_quote(o.mount_path.string()) << "\n";
}

std::string how_to_apply(const K8sOptions& o, const std::string& job) {
  fs::path dir = k8s_dir(o.job_dir);
  std::string ns = o.namespace_name.empty() ? "" : " -n " + o.namespace_name;
  std::ostringstream out;
  out << "# Apply both files; the assembly waits until every segment is done:\n"
      << "#   kubectl apply -f " << shell_quote((dir / "job.yaml").string()) << " -f " << shell_quote((dir / "assemble.yaml").string()) << "\n"
      << "# Follow:  kubectl get pods" << ns << " -l framelift.io/job=" << job << "\n"
      << "#          kubectl wait" << ns << " --for=condition=complete job/" << job << "-assemble --timeout=24h\n"
      << "# After a failure: kubectl delete job" << ns << " " << job << " " << job << "-assemble, then apply again;\n"
      << "# segments already finished are kept.\n";
  return out.str();
}

std::string worker_job(const K8sOptions& o, const std::string& job) {
  std::ostringstream out;
  out << "# framelift workers for the job in " << o.job_dir.string() << ": an Indexed Job, pod K runs shard K of "
      << o.workers << ".\n"
      << how_to_apply(o, job)
      << "# backoffLimitPerIndex needs Kubernetes 1.29 or later; on older clusters delete that line and\n"
      << "# backoffLimit alone counts the failures of all indexes together.\n"
      << "apiVersion: batch/v1\n"
      << "kind: Job\n";
  metadata(out, o, job, job);
  out << "spec:\n"
      << "  completionMode: Indexed\n"
      << "  completions: " << o.workers << "\n"
      << "  parallelism: " << o.workers << "\n"
      << "  backoffLimitPerIndex: " << o.retries << "\n"
      << "  backoffLimit: " << o.retries * o.workers << "\n";
  // The Job controller sets JOB_COMPLETION_INDEX in each pod; Kubernetes expands $(VAR) in args.
  pod_spec(out, o, job, "worker",
           {"resume", "--job-dir", o.job_dir.string(), "--shard", str("$(JOB_COMPLETION_INDEX)/", o.workers), "--no-assemble"});
  if (o.gpus > 0 || !o.cpu.empty() || !o.memory.empty()) {
    out << "          resources:\n"
        << "            limits:\n";
    if (o.gpus > 0) out << "              " << yaml_quote(o.gpu_resource) << ": " << o.gpus << "\n";
    if (!o.cpu.empty()) out << "              cpu: " << yaml_quote(o.cpu) << "\n";
    if (!o.memory.empty()) out << "              memory: " << yaml_quote(o.memory) << "\n";
    if (!o.cpu.empty() || !o.memory.empty()) {
      out << "            requests:\n";
      if (!o.cpu.empty()) out << "              cpu: " << yaml_quote(o.cpu) << "\n";
      if (!o.memory.empty()) out << "              memory: " << yaml_quote(o.memory) << "\n";
    }
  }
  return out.str();
}

std::string assemble_job(const K8sOptions& o, const std::string& job) {
  std::ostringstream out;
  out << "# Waits until every segment of the framelift job in " << o.job_dir.string() << " is done, then joins\n"
      << "# them into its output. Apply it together with job.yaml.\n"
      << "apiVersion: batch/v1\n"
      << "kind: Job\n";
  metadata(out, o, job + "-assemble", job);
  out << "spec:\n"
      << "  backoffLimit: " << o.retries << "\n";
  // Started with the workers, so it waits for them; a number, because a bare --wait has meant 0 s.
  pod_spec(out, o, job, "assemble", {"assemble", "--job-dir", o.job_dir.string(), "--wait", str(o.assemble_wait_s)});
  return out.str();
}

}  // namespace

fs::path k8s_dir(const fs::path& job_dir) { return job_dir / "deploy" / "k8s"; }

std::vector<DeployFile> k8s_files(const K8sOptions& options) {
  check(options);
  std::string job = options.name.empty() ? k8s_name(options.job_dir) : options.name;
  fs::path dir = k8s_dir(options.job_dir);
  return {
      {dir / "job.yaml", worker_job(options, job), false},
      {dir / "assemble.yaml", assemble_job(options, job), false},
  };
}

}  // namespace framelift::deploy
