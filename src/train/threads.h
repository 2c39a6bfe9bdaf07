// How many threads the next training step runs on, when the user left the count to
// mini-gpt (`--threads 0`, one process): all of them or one, whichever the run's own
// steps measure faster, measured again from time to time and at once when steps slow
// down. On a quiet machine that is all threads; when another process holds a core, a
// team of two waits at every barrier for its member that shares that core, and one
// thread is the faster (docs/performance.md, "Busy machines"). The choice is a
// measurement, and changes no bit of the run: every sum has one order on any thread count
// (docs/performance.md, "Reproducible on any thread count").
#pragma once

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

  int choice() const { return chosen_; }
  int trials() const { return trials_; }

  // A trial times kTimedSteps steps on the chosen count, then on the other (after one
  // untimed step: a count's first steps create its GEMM primitives), and switches when
  // the other is kMargin faster (noise must not flip a quiet run). It gives up on the
  // other at its first step kHopeless times slower, since on a busy machine each such
  // step costs several. Trials come kFirstGap steps apart, the gap doubled each time a
  // trial keeps the choice, up to kLongestGap; steps kSlowdown slower than the chosen
  // count measured start one at once. The run's first kSettleSteps steps are not timed.
  static constexpr int kSettleSteps = 2;
  static constexpr int kTimedSteps = 4;
  static constexpr int64_t kFirstGap = 100;
  static constexpr int64_t kLongestGap = 1600;
  static constexpr double kMargin = 0.10;
  static constexpr double kHopeless = 1.5;
  static constexpr double kSlowdown = 1.30;

 private:
  enum class Phase { start, chosen, other, run };
  int other() const { return chosen_ == all_ ? 1 : all_; }
  void start_trial();
  void end_trial(bool switch_to_other);

  const int all_;
  Phase phase_;
  int running_;          // the count the next step runs on
  int chosen_;           // the count the last trial chose
  int untimed_left_ = 0;
  std::vector<double> timed_;
  double chosen_seconds_ = 0.0;  // per step on the chosen count, as the last trial measured
  int64_t gap_ = kFirstGap;
  int64_t steps_since_trial_ = 0;
  std::vector<double> recent_;  // the last kTimedSteps steps' times, between trials
  int trials_ = 0;
};

}  // namespace mg
