#include "plan/gpu_catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "library/data_dir.h"
#include "util/cpu_features.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace framelift::plan {
namespace {

// Overlays `patch` on the entry of `list` with the same key, field by field, or appends it.
void overlay(json& list, const json& patch, const std::vector<std::string>& keys) {
  for (json& e : list) {
    bool same = true;
    for (const auto& k : keys) same = same && e.value(k, json()) == patch.value(k, json());
    if (same) {
      for (auto it = patch.begin(); it != patch.end(); ++it) e[it.key()] = it.value();
      return;
    }
  }
  list.push_back(patch);
}

template <class T>
T field(const json& e, const char* key, const std::string& where, T fallback) {
  if (!e.contains(key) || e[key].is_null()) return fallback;
  try {
    return e[key].get<T>();
  } catch (const json::exception&) {
    throw Error(ErrorKind::Input, str(where, ": '", key, "' has the wrong type"));
  }
}

double required_number(const json& e, const char* key, const std::string& where) {
  if (!e.contains(key) || !e[key].is_number())
    throw Error(ErrorKind::Input, str(where, ": '", key, "' is missing or not a number"));
  const double v = e[key].get<double>();
  if (v < 0) throw Error(ErrorKind::Input, str(where, ": '", key, "' is negative"));
  return v;
}

std::string required_string(const json& e, const char* key, const std::string& where) {
  if (!e.contains(key) || !e[key].is_string() || e[key].get<std::string>().empty())
    throw Error(ErrorKind::Input, str(where, ": '", key, "' is missing or not a string"));
  return e[key].get<std::string>();
}

}  // namespace

PlanCatalog PlanCatalog::from_json(const std::vector<json>& docs, const std::vector<std::string>& names) {
  json gpus = json::array(), providers = json::array(), offers = json::array();
  PlanCatalog c;
  for (size_t i = 0; i < docs.size(); ++i) {
    const json& d = docs[i];
    const std::string& name = names.at(i);
    if (!d.is_object()) throw Error(ErrorKind::Input, str(name, ": not a JSON object"));
    auto list = [&](const char* key) {
      if (!d.contains(key)) return json::array();
      if (!d[key].is_array()) throw Error(ErrorKind::Input, str(name, ": '", key, "' is not a list"));
      return d[key];
    };
    for (const json& g : list("gpus")) overlay(gpus, g, {"id"});
    for (const json& p : list("providers")) overlay(providers, p, {"id"});
    for (const json& o : list("offers")) overlay(offers, o, {"provider", "gpu"});
    if (d.contains("as_of") && d["as_of"].is_string()) c.as_of_.push_back(d["as_of"].get<std::string>());
  }
  const std::string where = names.empty() ? "catalog" : names.back();
  for (const json& g : gpus) {
    const std::string id = required_string(g, "id", where + ": a gpu");
    const std::string w = str(where, ": gpu ", id);
    Device dev;
    dev.id = id;
    dev.name = field<std::string>(g, "name", w, id);
    dev.architecture = field<std::string>(g, "architecture", w, "");
    dev.memory_gb = required_number(g, "memory_gb", w);
    dev.memory_bandwidth_gbs = required_number(g, "memory_bandwidth_gbs", w);
    dev.fp32_tflops = required_number(g, "fp32_tflops", w);
    dev.fp16_tensor_tflops = field<double>(g, "fp16_tensor_tflops", w, dev.fp32_tflops);
    dev.bf16_tensor_tflops = field<double>(g, "bf16_tensor_tflops", w, dev.fp16_tensor_tflops);
    dev.nvenc = field<int>(g, "nvenc", w, 0);
    dev.nvdec = field<int>(g, "nvdec", w, 0);
    dev.av1_encode = field<bool>(g, "av1_encode", w, false);
    if (dev.memory_gb <= 0 || dev.fp32_tflops <= 0) throw Error(ErrorKind::Input, str(w, ": memory_gb and fp32_tflops must be > 0"));
    c.devices_.push_back(dev);
  }
  for (const json& p : providers) {
    const std::string id = required_string(p, "id", where + ": a provider");
    const std::string w = str(where, ": provider ", id);
    Provider pr;
    pr.id = id;
    pr.name = field<std::string>(p, "name", w, id);
    pr.egress_per_gb = field<double>(p, "egress_per_gb", w, 0);
    pr.network_gbps = field<double>(p, "network_gbps", w, 1);
    pr.preemption_notice_s = field<double>(p, "preemption_notice_s", w, 0);
    pr.spot_interruptions_per_hour = field<double>(p, "spot_interruptions_per_hour", w, 0);
    if (pr.network_gbps <= 0) throw Error(ErrorKind::Input, str(w, ": network_gbps must be > 0"));
    c.providers_.push_back(pr);
  }
  for (const json& o : offers) {
    Offer of;
    of.provider = required_string(o, "provider", where + ": an offer");
    of.gpu = required_string(o, "gpu", where + ": an offer");
    const std::string w = str(where, ": offer ", of.provider, "/", of.gpu);
    if (!c.provider(of.provider)) throw Error(ErrorKind::Input, str(w, ": no provider '", of.provider, "'"));
    if (!c.device(of.gpu)) throw Error(ErrorKind::Input, str(w, ": no gpu '", of.gpu, "'"));
    of.instance = field<std::string>(o, "instance", w, "");
    of.on_demand = required_number(o, "on_demand", w);
    if (o.contains("spot") && !o["spot"].is_null()) of.spot = required_number(o, "spot", w);
    of.vcpus = field<int>(o, "vcpus", w, 8);
    if (of.vcpus < 1) throw Error(ErrorKind::Input, str(w, ": vcpus must be >= 1"));
    c.offers_.push_back(of);
  }
  return c;
}

PlanCatalog PlanCatalog::load(const std::vector<fs::path>& files) {
  std::vector<json> docs;
  std::vector<std::string> names;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw Error(ErrorKind::Input, str(f.string(), ": cannot open the catalog"));
    try {
      docs.push_back(json::parse(in));
    } catch (const json::parse_error& e) {
      throw Error(ErrorKind::Input, str(f.string(), ": not valid JSON (", e.what(), ")"));
    }
    names.push_back(f.string());
  }
  return from_json(docs, names);
}

PlanCatalog PlanCatalog::load_default(const std::vector<fs::path>& extra) {
  const char* dir = std::getenv("FRAMELIFT_PLAN_DATA");
  const fs::path data = dir && *dir ? fs::path(dir) : library::data_dir();
  std::vector<fs::path> files{data / "gpus.json", data / "offers.json"};
  files.insert(files.end(), extra.begin(), extra.end());
  return load(files);
}

const Device* PlanCatalog::device(const std::string& id) const {
  auto it = std::find_if(devices_.begin(), devices_.end(), [&](const Device& d) { return d.id == id; });
  return it == devices_.end() ? nullptr : &*it;
}

const Provider* PlanCatalog::provider(const std::string& id) const {
  auto it = std::find_if(providers_.begin(), providers_.end(), [&](const Provider& p) { return p.id == id; });
  return it == providers_.end() ? nullptr : &*it;
}

void PlanCatalog::add(const Device& device, const Provider& provider, const Offer& offer) {
  std::erase_if(devices_, [&](const Device& d) { return d.id == device.id; });
  std::erase_if(providers_, [&](const Provider& p) { return p.id == provider.id; });
  std::erase_if(offers_, [&](const Offer& o) { return o.provider == offer.provider && o.gpu == offer.gpu; });
  devices_.push_back(device);
  providers_.push_back(provider);
  offers_.push_back(offer);
}

Device local_cpu() {
  Device d;
  d.id = "cpu";
  d.name = "this machine's CPU";
  d.architecture = "cpu";
  d.cpu = true;
  d.cores = std::max(1u, std::thread::hardware_concurrency());
  double mhz = 0;
  int siblings = 0, cpu_cores = 0;  // per package: logical CPUs and physical cores
  int flops_per_cycle = 8;  // SSE: 4-wide multiply and add
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind("model name", 0) == 0 && d.name == "this machine's CPU") d.name = line.substr(line.find(':') + 2);
    if (line.rfind("cpu MHz", 0) == 0 && mhz == 0) mhz = std::atof(line.substr(line.find(':') + 1).c_str());
    if (line.rfind("siblings", 0) == 0 && siblings == 0) siblings = std::atoi(line.substr(line.find(':') + 1).c_str());
    if (line.rfind("cpu cores", 0) == 0 && cpu_cores == 0) cpu_cores = std::atoi(line.substr(line.find(':') + 1).c_str());
    if (line.rfind("flags", 0) == 0) {
      // Two FMA units per core on the AVX2/AVX-512 parts that rent out: 8 or 16 lanes x 2 x 2.
      if (line.find(" avx512f") != std::string::npos) flops_per_cycle = 64;
      else if (line.find(" fma") != std::string::npos && line.find(" avx2") != std::string::npos) flops_per_cycle = 32;
    }
  }
  // cpuinfo's MHz is the current or nominal clock; the boost clock, where the kernel knows it, is
  // what busy cores run at.
  std::ifstream max_khz("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (max_khz >> khz) mhz = std::max(mhz, khz / 1000);
  if (mhz <= 0) mhz = 2500;
  // hardware_concurrency counts SMT threads; FMA units belong to physical cores. cpuinfo says how
  // many logical CPUs share a core (siblings / cpu cores); without it, assume two.
  const double threads_per_core = siblings > 0 && cpu_cores > 0 ? double(siblings) / cpu_cores : 2.0;
  const int physical = std::max(1, static_cast<int>(d.cores / threads_per_core));
  d.fp32_tflops = physical * mhz * 1e6 * flops_per_cycle / 1e12;
  d.fp16_tensor_tflops = d.bf16_tensor_tflops = d.fp32_tflops;
  // bf16 peaks: AMX's TDPBF16PS does 16 x 16 x 32 multiply-adds in 16 cycles, 1024 FLOP a cycle
  // per core; AVX512-BF16's VDPBF16PS packs two bf16 products in each fp32 lane, twice fp32.
  const CpuBf16Support bf16 = cpu_bf16_support();
  d.cpu_bf16 = bf16.fast;
  if (bf16.fast) d.bf16_tensor_tflops = bf16.amx ? physical * mhz * 1e6 * 1024 / 1e12 : 2 * d.fp32_tflops;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  d.memory_gb = pages > 0 && page > 0 ? double(pages) * page / 1e9 : 8;
  d.memory_bandwidth_gbs = 20;  // a typical dual-channel figure; calibration replaces it
  return d;
}

namespace {

// Lower-case letters and digits only, without the vendor's brand words.
std::string squeeze(std::string s) {
  for (const char* brand : {"NVIDIA", "nvidia", "GeForce", "geforce"})
    for (size_t at; (at = s.find(brand)) != std::string::npos;) s.erase(at, std::strlen(brand));
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string catalog_id_for(const std::string& device_name, double memory_gb, const PlanCatalog& catalog) {
  const std::string name = squeeze(device_name);
  std::string best;
  size_t best_len = 0;
  double best_gap = 0;
  for (const Device& d : catalog.devices()) {
    if (d.cpu) continue;
    // The id without a memory suffix ("a100-80gb" -> "a100"): names put the memory elsewhere.
    std::string key = squeeze(d.id);
    if (const size_t gb = key.rfind("gb"); gb != std::string::npos && gb + 2 == key.size()) {
      size_t digits = gb;
      while (digits > 0 && std::isdigit(static_cast<unsigned char>(key[digits - 1]))) --digits;
      if (digits > 0) key.resize(digits);
    }
    if (key.empty() || name.rfind(key, 0) != 0) continue;
    const double gap = std::abs(d.memory_gb - memory_gb);
    if (key.size() > best_len || (key.size() == best_len && gap < best_gap)) {
      best = d.id;
      best_len = key.size();
      best_gap = gap;
    }
  }
  return best;
}

std::string precision_on(const Device& d, const std::string& requested) {
  if (!d.cpu) return requested;
  return requested != "fp32" && d.cpu_bf16 ? "bf16" : "fp32";
}

}  // namespace framelift::plan
