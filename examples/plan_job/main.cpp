// Which GPU to rent for a job, before renting it: the planner on a real video and a pipeline,
// printing the recommendation and the three cheapest offers that fit.
//   plan_job VIDEO [PIPELINE] [DEADLINE_SECONDS]
#include <framelift/framelift.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s VIDEO [PIPELINE] [DEADLINE_SECONDS]\n", argv[0]);
    return 2;
  }
  framelift::PlanRequest request;
  request.input = argv[1];
  if (argc > 2) request.pipeline = argv[2];
  if (argc > 3) request.deadline_s = std::atof(argv[3]);
  try {
    const framelift::PlanResult plan = framelift::plan_job(request);
    std::printf("%s\n", plan.recommendation.c_str());
    int shown = 0;
    for (const framelift::PlanRow& row : plan.rows) {
      if (row.fits == "no" || shown == 3) continue;
      std::printf("%-10s %-12s %8.0f s  $%7.3f  %5.1f GB%s\n", row.gpu.c_str(), row.provider.c_str(), row.time_s, row.cost,
                  row.memory_gb, row.recommended ? "  <- recommended" : "");
      ++shown;
    }
    return 0;
  } catch (const framelift::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return framelift::exit_code(e.kind());
  }
}
