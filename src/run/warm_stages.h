#pragma once
// A stage chain kept from one run to the next: a job worker builds its pipeline once and reuses
// it for every segment it takes, so weights are loaded, the memory probe runs and CUDA graphs are
// recorded once per worker instead of once per segment (docs/jobs.md, "Warm segments"). Each
// reuse resets the stages (Stage::reset) so that a segment's output is the same as from a fresh
// chain; the tests compare the two frame by frame.
//
// Not thread-safe: one per worker thread.
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace framelift::pipeline {

class Stage;

class WarmStages {
 public:
  WarmStages();
  ~WarmStages();
  WarmStages(const WarmStages&) = delete;
  WarmStages& operator=(const WarmStages&) = delete;

  // The chain for this pipeline text and these stage defaults: built by the first call, reset and
  // returned as it is by later calls with the same two, rebuilt when either differs. Throws what
  // make_stages throws. The reference stays valid until the next call or destruction.
  std::vector<std::unique_ptr<Stage>>& get(const std::string& pipeline, const std::map<std::string, std::string>& defaults);

  int builds() const { return builds_; }  // how many times a chain was built
  int reuses() const { return reuses_; }  // how many times one was reused

 private:
  std::string pipeline_;
  std::map<std::string, std::string> defaults_;
  std::vector<std::unique_ptr<Stage>> stages_;
  bool built_ = false;
  int builds_ = 0, reuses_ = 0;
};

}  // namespace framelift::pipeline
