#include "plan/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "plan/format.h"
#include "util/disk_space.h"
#include "util/str.h"

using nlohmann::json;

namespace framelift::plan {
namespace {

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::vector<std::string> row_cells(const Plan& plan, const OfferEstimate& r, size_t i) {
  const bool runs = r.est.fit != Fit::No;
  std::vector<std::string> warnings = r.est.warnings;
  if (!runs) warnings.insert(warnings.begin(), r.est.why_not);
  if (runs && !r.meets_deadline) warnings.push_back("misses the deadline");
  if (runs && !r.within_budget) warnings.push_back("over budget");
  // An unknown stage's time is in no figure: they are bounds, and say so.
  const std::string at_most = r.est.cost_known() ? "" : "<", at_least = r.est.cost_known() ? "" : ">";
  return {std::string(plan.recommended == i ? "*" : " ") + r.est.device.id,
          r.provider.id,
          fit_name(r.est.fit),
          !runs ? "-" : r.est.tile ? std::to_string(r.est.tile) : "frame",
          runs ? at_most + fixed(r.est.fps, r.est.fps < 10 ? 2 : 1) : "-",
          runs ? at_least + human_duration(r.time_s) : "-",
          runs ? at_least + money(r.cost) : "-",
          runs && r.spot_cost ? at_least + money(*r.spot_cost) : "-",
          runs ? human_duration(r.transfer_s) : "-",
          join(warnings, "; ")};
}

const std::vector<std::string> kHeader = {" GPU", "provider", "fits", "tile", "fps", "time", "on-demand", "spot", "transfer", "warnings"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string fixed_bits(double bits) { return fixed(bits, bits < 0.1 ? 3 : 2); }

// "Disk: about 19.0 MB at the peak (segments ..., output ...; bits/pixel from ...); /out has 12.30 GB free".
std::string disk_line(const Plan& plan) {
  const DiskEstimate& d = plan.disk;
  std::string line = str("Disk: about ", human_bytes(d.peak_bytes()), " at the peak (segments ", human_bytes(d.segments_bytes),
                         ", output ", human_bytes(d.output_bytes));
  if (d.model_bytes > 0) line += str(", models to install ", human_bytes(d.model_bytes));
  line += str("; ", fixed_bits(d.bits_per_pixel), " bits/pixel from ", d.bits_from == "table" ? "the table" : d.bits_from, ")");
  if (d.input_bytes > 0) line += str(", ", human_bytes(d.input_bytes), " more where the input must be copied");
  if (plan.options.output_folder_free_bytes >= 0)
    line += str("; ", plan.options.output_folder, " has ", human_bytes(plan.options.output_folder_free_bytes), " free");
  return line;
}

}  // namespace

std::string plan_text(const Plan& plan) {
  const Job& j = plan.job;
  std::string out = str("Job: ", j.width, "x", j.height, " -> ", j.out_width(), "x", j.out_height(), ", ", j.frames,
                        " -> ", j.out_frames(), " frames, ", j.codec, ", output about ", human_bytes(plan.output_bytes), "\n");
  out += disk_line(plan) + "\n";
  std::vector<std::vector<std::string>> rows{kHeader};
  for (size_t i = 0; i < plan.rows.size(); ++i) rows.push_back(row_cells(plan, plan.rows[i], i));
  std::vector<size_t> width(kHeader.size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c + 1 < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += plan.recommendation + "\n";
  for (const auto& n : plan.notes) out += "note: " + n + "\n";
  return out;
}

json plan_json(const Plan& plan) {
  const Job& j = plan.job;
  json stages = json::array();
  for (const auto& s : j.stages)
    stages.push_back({{"kind", s.kind}, {"model", s.model}, {"arch", s.priced ? json(s.cost.arch) : json(nullptr)},
                      {"scale", s.scale}, {"frame_factor", s.frame_factor}, {"cost_known", s.priced},
                      {"gflops_per_input_megapixel", s.priced ? json(s.cost.flops_per_px() / 1e3) : json(nullptr)}});
  json rows = json::array();
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    const auto& r = plan.rows[i];
    json stage_estimates = json::array();
    for (const auto& s : r.est.stages)
      stage_estimates.push_back({{"kind", s.kind}, {"model", s.model}, {"pixels_per_call", s.pixels_per_call},
                                 {"calls_per_frame", s.calls_per_frame}, {"seconds_per_frame", s.seconds_per_frame},
                                 {"activation_bytes", s.activation_bytes}});
    rows.push_back({{"gpu", r.est.device.id},
                    {"stages", stage_estimates},
                    {"gpu_name", r.est.device.name},
                    {"provider", r.provider.id},
                    {"instance", r.offer.instance},
                    {"fits", fit_name(r.est.fit)},
                    {"why_not", r.est.why_not},
                    {"tile", r.est.tile},
                    {"memory_gb", r.est.memory_gb},
                    {"memory_free", r.est.margin},
                    {"cost_known", r.est.cost_known()},
                    {"unknown_stages", r.est.unknown_stages},
                    {"fps", num(r.est.fps)},
                    {"bound", r.est.bound},
                    {"gpu_busy", r.est.gpu_busy},
                    {"encoder", r.est.encode.codec},
                    {"encoder_on_gpu", r.est.encode.on_gpu},
                    {"time_s", num(r.time_s)},
                    {"transfer_s", r.transfer_s},
                    {"cost_on_demand", num(r.cost)},
                    {"egress_cost", r.egress_cost},
                    {"spot_time_s", r.spot_time_s ? json(*r.spot_time_s) : json(nullptr)},
                    {"cost_spot", r.spot_cost ? json(*r.spot_cost) : json(nullptr)},
                    {"expected_interruptions", r.expected_interruptions},
                    {"price_on_demand", r.offer.on_demand},
                    {"price_spot", r.offer.spot ? json(*r.offer.spot) : json(nullptr)},
                    {"meets_deadline", r.meets_deadline},
                    {"within_budget", r.within_budget},
                    {"recommended", plan.recommended == i},
                    {"warnings", r.est.warnings}});
  }
  const DiskEstimate& d = plan.disk;
  const double free = plan.options.output_folder_free_bytes;
  json disk = {{"peak_bytes", d.peak_bytes()},
               {"segments_bytes", d.segments_bytes},
               {"output_bytes", d.output_bytes},
               {"model_bytes", d.model_bytes},
               {"input_bytes", d.input_bytes},
               {"bits_per_pixel", d.bits_per_pixel},
               {"bits_from", d.bits_from},
               {"folder", plan.options.output_folder},
               {"free_bytes", free >= 0 ? json(free) : json(nullptr)},
               {"fits", free >= 0 ? json(d.peak_bytes() <= free) : json(nullptr)}};
  return {{"disk_bytes", d.peak_bytes()},
          {"disk", disk},
          {"job",
           {{"width", j.width}, {"height", j.height}, {"frames", j.frames}, {"fps", j.fps}, {"input_bytes", j.input_bytes},
            {"out_width", j.out_width()}, {"out_height", j.out_height()}, {"out_frames", j.out_frames()},
            {"codec", j.codec}, {"precision", j.precision}, {"output_bytes", plan.output_bytes}, {"stages", stages}}},
          {"options",
           {{"deadline_s", plan.options.deadline_s}, {"budget", plan.options.budget}, {"spot", plan.options.spot},
            {"memory_margin", plan.options.memory_margin}}},
          {"rows", rows},
          {"recommended", plan.recommended ? json(*plan.recommended) : json(nullptr)},
          {"recommendation", plan.recommendation},
          {"notes", plan.notes}};
}

std::string plan_html(const Plan& plan) {
  // Chart: x = time (hours), y = cost (USD), one dot per offer that runs, the recommended one red.
  const bool spot = plan.options.spot;
  double max_t = 0, max_c = 0, min_t = 1e300;
  for (const auto& r : plan.rows) {
    if (r.est.fit == Fit::No) continue;
    max_t = std::max(max_t, r.ranked_time(spot) / 3600);
    min_t = std::min(min_t, r.ranked_time(spot) / 3600);
    max_c = std::max(max_c, r.ranked_cost(spot));
  }
  // A deadline far beyond every offer would squeeze them all against the axis: then it is only
  // named at the right edge.
  const double deadline_h = plan.options.deadline_s / 3600;
  const bool deadline_on_chart = deadline_h > 0 && deadline_h <= max_t * 1.5;
  if (deadline_on_chart) max_t = std::max(max_t, deadline_h);
  max_t = max_t > 0 ? max_t * 1.1 : 1;
  // Start the time axis near the fastest offer when all are alike (start-up dominates short jobs).
  const double t0 = min_t < 1e300 && min_t > 0.4 * max_t && !deadline_on_chart ? min_t * 0.9 : 0;
  max_c = max_c > 0 ? max_c * 1.1 : 1;
  const double W = 760, H = 420, L = 70, B = 50, T = 20, R = 20;
  auto x = [&](double hours) { return L + (hours - t0) / (max_t - t0) * (W - L - R); };
  auto y = [&](double usd) { return H - B - usd / max_c * (H - B - T); };
  std::string svg = str("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", W, "\" height=\"", H, "\" viewBox=\"0 0 ", W, " ", H,
                        "\" font-family=\"sans-serif\" font-size=\"11\">\n");
  svg += str("<line x1=\"", L, "\" y1=\"", H - B, "\" x2=\"", W - R, "\" y2=\"", H - B, "\" stroke=\"#333\"/>\n");
  svg += str("<line x1=\"", L, "\" y1=\"", T, "\" x2=\"", L, "\" y2=\"", H - B, "\" stroke=\"#333\"/>\n");
  for (int i = 0; i <= 5; ++i) {
    const double t = t0 + (max_t - t0) * i / 5, c = max_c * i / 5;
    svg += str("<text x=\"", fixed(x(t), 1), "\" y=\"", H - B + 16, "\" text-anchor=\"middle\">", escape(human_duration(t * 3600)), "</text>\n");
    svg += str("<text x=\"", L - 6, "\" y=\"", fixed(y(c) + 4, 1), "\" text-anchor=\"end\">", escape(money(c)), "</text>\n");
  }
  svg += str("<text x=\"", (L + W - R) / 2, "\" y=\"", H - 10, "\" text-anchor=\"middle\">estimated time</text>\n");
  svg += str("<text x=\"16\" y=\"", (T + H - B) / 2, "\" transform=\"rotate(-90 16 ", (T + H - B) / 2,
             ")\" text-anchor=\"middle\">estimated cost (", spot ? "spot" : "on demand", ")</text>\n");
  if (deadline_h > 0 && !deadline_on_chart) {
    svg += str("<text x=\"", W - R, "\" y=\"", T + 10, "\" text-anchor=\"end\" fill=\"#c60\">deadline ",
               escape(human_duration(plan.options.deadline_s)), " &#8594;</text>\n");
  } else if (deadline_h > 0) {
    const double dx = x(deadline_h);
    svg += str("<line x1=\"", fixed(dx, 1), "\" y1=\"", T, "\" x2=\"", fixed(dx, 1), "\" y2=\"", H - B,
               "\" stroke=\"#c60\" stroke-dasharray=\"4 3\"/><text x=\"", fixed(dx + 4, 1), "\" y=\"", T + 10, "\" fill=\"#c60\">deadline</text>\n");
  }
  // Labels only where they help: the recommendation and the offers no other offer beats on both
  // time and cost (the rest keep their tooltip; dozens of labels on one spot are unreadable).
  auto dominated = [&](const OfferEstimate& a) {
    for (const auto& b : plan.rows)
      if (b.est.fit != Fit::No && b.ranked_time(spot) <= a.ranked_time(spot) && b.ranked_cost(spot) <= a.ranked_cost(spot) &&
          (b.ranked_time(spot) < a.ranked_time(spot) || b.ranked_cost(spot) < a.ranked_cost(spot)))
        return true;
    return false;
  };
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    const auto& r = plan.rows[i];
    if (r.est.fit == Fit::No) continue;
    const bool rec = plan.recommended == i;
    const double cx = x(r.ranked_time(spot) / 3600), cy = y(r.ranked_cost(spot));
    const std::string label = r.est.device.id + " @ " + r.provider.id;
    svg += str("<circle cx=\"", fixed(cx, 1), "\" cy=\"", fixed(cy, 1), "\" r=\"", rec ? 6 : 4, "\" fill=\"",
               rec ? "#d00" : r.meets_deadline && r.within_budget ? "#2a6" : "#999", "\"><title>", escape(label), ": ",
               escape(human_duration(r.ranked_time(spot))), ", ", escape(money(r.ranked_cost(spot))), "</title></circle>\n");
    // Near the right edge the label goes to the left of its dot.
    const bool left = cx > W - R - 140;
    if (rec || !dominated(r))
      svg += str("<text x=\"", fixed(left ? cx - 7 : cx + 7, 1), "\" y=\"", fixed(cy + 4, 1), "\"",
                 left ? " text-anchor=\"end\"" : "", " fill=\"", rec ? "#d00" : "#444", "\">", escape(label), "</text>\n");
  }
  svg += "</svg>\n";

  std::string table = "<table>\n<tr>";
  for (const auto& h : kHeader) table += "<th>" + escape(h) + "</th>";
  table += "</tr>\n";
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    table += plan.recommended == i ? "<tr class=\"rec\">" : "<tr>";
    for (const auto& cell : row_cells(plan, plan.rows[i], i)) table += "<td>" + escape(cell) + "</td>";
    table += "</tr>\n";
  }
  table += "</table>\n";
  std::string notes;
  for (const auto& n : plan.notes) notes += "<li>" + escape(n) + "</li>\n";
  const Job& j = plan.job;
  return str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>framelift plan</title>\n<style>\n",
             "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;font-size:13px}",
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}tr.rec{background:#fee}\n</style></head><body>\n",
             "<h1>framelift plan</h1>\n<p>", j.width, "x", j.height, " &rarr; ", j.out_width(), "x", j.out_height(), ", ",
             j.frames, " &rarr; ", j.out_frames(), " frames, ", escape(j.codec), "</p>\n<p>", escape(disk_line(plan)), "</p>\n<p><b>", escape(plan.recommendation),
             "</b></p>\n", svg, table, "<ul>\n", notes, "</ul>\n</body></html>\n");
}

}  // namespace framelift::plan
