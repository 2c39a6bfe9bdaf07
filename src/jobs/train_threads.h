// How many threads the next training step runs on, when the user left the count to
// mini-gpt (`--threads 0`, one process): all of them or one, whichever the run's own
// steps measure faster, measured again from time to time and at once when steps slow
// down. On a quiet machine that is all threads; when another process holds a core, a
// team of two waits at every barrier for its member that shares that core, and one
// thread is the faster (docs/performance.md, "Busy machines"). The choice is a
// measurement, so such a run is not reproducible bit for bit (one thread count sums
// in one order); a given --threads N is.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace mg {

class StepThreadChooser {
 public:
  // ALL: the thread count the run would use without a choice (1: nothing to choose).
  explicit StepThreadChooser(int all);

  // Before each step: the thread count it should run on.
  int threads_for_next_step() const { return running_; }
  // After it: its time, in seconds.
  void record(double step_seconds);

  // The counts the run has measured and chosen so far, for the record.
  int choices_made() const { return choices_; }
  int choice() const { return chosen_; }

  // Steps a trial runs per candidate before timing it (the first steps on a new count
  // create its GEMM primitives), the steps it times, and the steps between trials: the
  // first gap, doubled each time a trial confirms the choice, up to the last.
  static constexpr int kSettleSteps = 2;
  static constexpr int kTimedSteps = 4;
  static constexpr int64_t kFirstGap = 100;
  static constexpr int64_t kLongestGap = 1600;
  // One thread must be this much faster to be chosen (noise must not flip a quiet run);
  // steps this much slower than the trial measured start a new trial early.
  static constexpr double kMargin = 0.10;
  static constexpr double kSlowdown = 1.30;

 private:
  enum class Phase { start, trial, run };
  void start_trial();
  void finish_trial();

  const int all_;
  Phase phase_;
  int running_;            // the count the next step runs on
  int chosen_;             // the count the last trial chose
  int candidate_ = 0;      // in a trial: 0 all threads, 1 one thread
  int steps_on_candidate_ = 0;
  std::vector<double> timed_;
  std::array<double, 2> trial_median_{};  // seconds per step of all threads, one thread
  int64_t gap_ = kFirstGap;
  int64_t steps_since_trial_ = 0;
  std::vector<double> recent_;  // the last kTimedSteps steps' times, in a run phase
  int choices_ = 0;
};

}  // namespace mg
