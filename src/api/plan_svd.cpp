// framelift::plan_svd (framelift/plan.h): src/plan's diffusion estimates per catalog GPU, as rows,
// a table and JSON.
#include <algorithm>

#include "framelift/plan.h"
#include "plan/diffusion.h"
#include "plan/format.h"
#include "plan/gpu_catalog.h"
#include "util/json_text.h"
#include "util/str.h"

namespace framelift {
namespace {

plan::SvdSettings settings_of(const SvdPlanRequest& q) {
  plan::SvdSettings s;
  s.width = q.width;
  s.height = q.height;
  s.frames = q.frames;
  s.steps = q.steps;
  s.decode_chunk_size = q.decode_chunk_size;
  s.forward_chunking = q.forward_chunking;
  s.offload = q.offload;
  return s;
}

// One line of the table: the estimate as asked, then what fits.
std::string text_line(const std::string& gpu, const plan::SvdEstimate& asked, const plan::SvdEstimate& fit, int frames) {
  const std::string how =
      fit.fits ? str("decode_chunk_size=", fit.settings.decode_chunk_size ? fit.settings.decode_chunk_size : frames,
                     fit.settings.forward_chunking ? ", forward chunking" : "",
                     fit.settings.offload != "none" ? ", " + fit.settings.offload + " offload" : "")
               : std::string("does not fit even with sequential offload");
  return str(gpu, ": peak ", plan::gigabytes(asked.peak_gb * 1e9), " as asked (", asked.fits ? "fits" : "too big", "), ",
             plan::human_duration(asked.seconds), "; fits with: ", how,
             fit.fits ? str(" (", plan::gigabytes(fit.peak_gb * 1e9), ", ", plan::human_duration(fit.seconds), ")") : "", "\n");
}

nlohmann::json json_row(const SvdPlanRow& row, const plan::SvdEstimate& asked) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : asked.stages)
    stages.push_back({{"stage", st.name}, {"weights_gb", st.weights_gb}, {"activations_gb", st.activations_gb}, {"total_gb", st.total_gb}});
  const auto& f = row.fits_with;
  return {{"gpu", row.gpu}, {"peak_gb", row.peak_gb}, {"seconds", row.seconds}, {"fits", row.fits}, {"stages", stages},
          {"fits_with", f ? nlohmann::json{{"decode_chunk_size", f->decode_chunk_size},
                                           {"forward_chunking", f->forward_chunking},
                                           {"offload", f->offload},
                                           {"peak_gb", f->peak_gb},
                                           {"seconds", f->seconds}}
                          : nlohmann::json(nullptr)}};
}

}  // namespace

SvdPlanResult plan_svd(const SvdPlanRequest& q) {
  const plan::PlanCatalog catalog = plan::PlanCatalog::load_default({q.catalogs.begin(), q.catalogs.end()});
  const plan::SvdSettings settings = settings_of(q);
  SvdPlanResult r;
  nlohmann::json rows = nlohmann::json::array();
  r.text = str("SVD ", q.width, "x", q.height, ", ", q.frames, " frames, ", q.steps, " steps (estimates, +-50%: docs/planner.md)\n");
  for (const auto& d : catalog.devices()) {
    if (!q.gpus.empty() && std::find(q.gpus.begin(), q.gpus.end(), d.id) == q.gpus.end()) continue;
    const plan::SvdEstimate asked = plan::estimate_svd(settings, d, q.memory_margin);
    const plan::SvdEstimate fit = plan::svd_settings_ladder(settings, d, q.memory_margin).back();
    SvdPlanRow row{d.id, asked.peak_gb, asked.seconds, asked.fits, std::nullopt};
    if (fit.fits)
      row.fits_with = SvdFit{fit.settings.decode_chunk_size, fit.settings.forward_chunking, fit.settings.offload, fit.peak_gb, fit.seconds};
    r.text += text_line(d.id, asked, fit, q.frames);
    rows.push_back(json_row(row, asked));
    r.rows.push_back(std::move(row));
  }
  r.json = json_text(nlohmann::json{{"workload", "svd"}, {"devices", rows}}, 2);
  return r;
}

}  // namespace framelift
