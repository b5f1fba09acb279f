#pragma once
// The planner's catalog (data/gpus.json, data/offers.json): devices with their vendor peak figures,
// providers with egress price, bandwidth and spot behaviour, and offers (a device at a provider, per
// GPU-hour on demand and spot). Prices are indicative and dated (as_of); users override or extend
// any entry with their own file of the same layout (framelift plan --catalog FILE).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace framelift::plan {

struct Device {
  std::string id, name, architecture;  // architecture: ampere, ada, hopper, ... or "cpu"
  double memory_gb = 0;                // decimal GB
  double memory_bandwidth_gbs = 0;
  double fp32_tflops = 0;
  double fp16_tensor_tflops = 0;       // dense, FP32 accumulate
  double bf16_tensor_tflops = 0;
  int nvenc = 0, nvdec = 0;            // hardware video engines; 0 nvenc: encoding falls to the CPU
  bool av1_encode = false;
  bool cpu = false;                    // the CPU of this machine, not a GPU
  // A CPU that multiplies bf16 natively (AMX-BF16, AVX512-BF16): `run`'s auto precision is bf16
  // there, and bf16_tensor_tflops is its bf16 peak.
  bool cpu_bf16 = false;
  int cores = 0;                       // CPU only: cores that run inference
};

struct Provider {
  std::string id, name;
  double egress_per_gb = 0;               // USD per GB out
  double network_gbps = 1;                // typical instance bandwidth
  double preemption_notice_s = 0;         // warning before a spot reclaim
  double spot_interruptions_per_hour = 0; // assumed average rate
};

struct Offer {
  std::string provider, gpu, instance;
  double on_demand = 0;                   // USD per GPU-hour
  std::optional<double> spot;             // none when the provider sells no interruptible capacity
  int vcpus = 8;                          // vCPUs per GPU (CPU encoding, decoding)
};

class PlanCatalog {
 public:
  // gpus.json and offers.json of library::data_dir() ($FRAMELIFT_PLAN_DATA: another folder),
  // then the `extra` files (--catalog) over them.
  static PlanCatalog load_default(const std::vector<std::filesystem::path>& extra = {});
  // Files of the catalog layout (any of "gpus", "providers", "offers"), later files overriding
  // earlier ones entry by entry: devices and providers by id, offers by provider and gpu; a field
  // a later entry leaves out keeps its earlier value. Throws Error(Input, "<file>: <problem>").
  static PlanCatalog load(const std::vector<std::filesystem::path>& files);
  // The same from JSON documents already parsed; `names` label them in error messages.
  static PlanCatalog from_json(const std::vector<nlohmann::json>& docs, const std::vector<std::string>& names);

  // Adds (or replaces, by id) a device with an offer of its own, e.g. local_cpu() at a price.
  void add(const Device& device, const Provider& provider, const Offer& offer);

  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Provider>& providers() const { return providers_; }
  const std::vector<Offer>& offers() const { return offers_; }
  const Device* device(const std::string& id) const;
  const Provider* provider(const std::string& id) const;
  const std::vector<std::string>& as_of() const { return as_of_; }  // one per file that had one

 private:
  std::vector<Device> devices_;
  std::vector<Provider> providers_;
  std::vector<Offer> offers_;
  std::vector<std::string> as_of_;
};

// The CPU of this machine as a device: cores, RAM, and peak FP32 from the clock and vector width
// (/proc/cpuinfo). Peak, not speed: calibration turns it into one.
Device local_cpu();

// The precision a run uses on `d` when the job asks for `requested` ("fp16", "bf16", "fp32"):
// GPUs take it as asked; a CPU runs bf16 where it multiplies bf16 natively (what `run`'s auto
// picks) unless fp32 is asked for, else fp32.
std::string precision_on(const Device& d, const std::string& requested);

// The catalog id of a CUDA device by its name ("NVIDIA GeForce RTX 4090" -> rtx4090, "NVIDIA
// A100-SXM4-80GB" -> a100-80gb: the memory decides between variants), or "" when none matches.
std::string catalog_id_for(const std::string& device_name, double memory_gb, const PlanCatalog& catalog);

}  // namespace framelift::plan
