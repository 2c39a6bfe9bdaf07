// The training run's thread choice (train/threads.h), driven by step times made up
// for each thread count: a quiet machine, a busy one, one that turns busy mid-run.
#include "train/threads.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace mg {
namespace {

using Chooser = StepThreadChooser;
constexpr int kSettle = Chooser::kSettleSteps, kTimed = Chooser::kTimedSteps;

// Runs STEPS steps, each taking seconds_of(step, threads); returns each step's count.
std::vector<int> run_steps(Chooser& chooser, int steps, const std::function<double(int, int)>& seconds_of) {
  std::vector<int> counts;
  for (int s = 0; s < steps; ++s) {
    const int threads = chooser.threads_for_next_step();
    counts.push_back(threads);
    chooser.record(seconds_of(s, threads));
  }
  return counts;
}

// The counts of steps [from, to).
std::vector<int> slice(const std::vector<int>& counts, int from, int to) {
  return std::vector<int>(counts.begin() + from, counts.begin() + to);
}

TEST(StepThreadChooser, OneThreadHasNothingToChoose) {
  Chooser chooser(1);
  for (int threads : run_steps(chooser, 500, [](int, int) { return 1.0; })) EXPECT_EQ(threads, 1);
  EXPECT_EQ(chooser.trials(), 0);
}

TEST(StepThreadChooser, QuietMachineGivesUpOnOneThreadAfterItsFirstTimedStep) {
  Chooser chooser(2);
  const auto counts = run_steps(chooser, 100, [](int, int t) { return t == 2 ? 1.0 : 1.9; });
  // Settling and the chosen count's timed steps on both threads; one untimed and one timed
  // step on one thread (1.9 > kHopeless x 1.0); then both threads.
  const int trial_end = kSettle + kTimed + 2;
  EXPECT_EQ(slice(counts, 0, kSettle + kTimed), std::vector<int>(kSettle + kTimed, 2));
  EXPECT_EQ(slice(counts, kSettle + kTimed, trial_end), std::vector<int>(2, 1));
  EXPECT_EQ(slice(counts, trial_end, 100), std::vector<int>(100 - trial_end, 2));
  EXPECT_EQ(chooser.choice(), 2);
  EXPECT_EQ(chooser.trials(), 1);
}

TEST(StepThreadChooser, OneThreadSlightlySlowerIsTimedInFullAndNotChosen) {
  Chooser chooser(2);
  const auto counts = run_steps(chooser, 100, [](int, int t) { return t == 2 ? 1.0 : 1.2; });
  const int trial_end = kSettle + kTimed + 1 + kTimed;
  EXPECT_EQ(slice(counts, kSettle + kTimed, trial_end), std::vector<int>(1 + kTimed, 1));
  EXPECT_EQ(counts[trial_end], 2);
  EXPECT_EQ(chooser.choice(), 2);
}

TEST(StepThreadChooser, KeptChoicesAreCheckedLessOften) {
  Chooser chooser(2);
  const auto counts = run_steps(chooser, 20000, [](int, int t) { return t == 2 ? 1.0 : 1.9; });
  int one_thread_steps = 0;
  for (int threads : counts) one_thread_steps += threads == 1;
  // The first trial ends at step 8; then gaps of 100, 200, 400 and 800 steps, each before
  // a 6-step trial (1,532 steps in all), then one per 1,606 steps: 16 trials in 20,000.
  EXPECT_EQ(chooser.trials(), 16);
  EXPECT_EQ(one_thread_steps, 16 * 2);
}

TEST(StepThreadChooser, BusyMachineRunsOnOneThreadAndTriesBothThreadsBriefly) {
  Chooser chooser(2);
  const auto counts = run_steps(chooser, 300, [](int, int t) { return t == 2 ? 3.0 : 1.0; });
  const int chosen_from = kSettle + kTimed + 1 + kTimed;
  int both_threads_later = 0;
  for (int s = chosen_from; s < 300; ++s) both_threads_later += counts[s] == 2;
  // One more trial, 100 steps after the first (the next comes 200 after it): one untimed
  // and one hopeless step on two threads.
  EXPECT_EQ(counts[chosen_from], 1);
  EXPECT_EQ(both_threads_later, 2);
  EXPECT_EQ(chooser.choice(), 1);
  EXPECT_EQ(chooser.trials(), 2);
}

TEST(StepThreadChooser, SmallGainsDoNotFlipTheChoice) {
  Chooser chooser(2);
  run_steps(chooser, 100, [](int, int t) { return t == 2 ? 1.0 : 0.95; });  // within kMargin
  EXPECT_EQ(chooser.choice(), 2);
  Chooser faster(2);
  run_steps(faster, 100, [](int, int t) { return t == 2 ? 1.0 : 0.85; });
  EXPECT_EQ(faster.choice(), 1);
}

TEST(StepThreadChooser, SlowerStepsStartANewTrialAtOnce) {
  Chooser chooser(2);
  const int busy_from = 40;  // after the first trial kept both threads
  const auto counts = run_steps(chooser, 80, [&](int s, int t) {
    return s < busy_from ? (t == 2 ? 1.0 : 1.9) : (t == 2 ? 3.0 : 1.9);
  });
  EXPECT_EQ(counts[busy_from - 1], 2);
  // Two slow steps make the median of the last four slow: a trial from busy_from + 2.
  const int trial = busy_from + 2;
  EXPECT_EQ(slice(counts, trial, trial + kTimed), std::vector<int>(kTimed, 2));
  EXPECT_EQ(slice(counts, trial + kTimed, 80), std::vector<int>(80 - trial - kTimed, 1));
  EXPECT_EQ(chooser.choice(), 1);
  EXPECT_EQ(chooser.trials(), 2);
}

TEST(StepThreadChooser, ANoisyStepAloneStartsNoTrial) {
  Chooser chooser(2);
  run_steps(chooser, 60, [](int s, int t) { return s == 40 ? 10.0 : (t == 2 ? 1.0 : 1.9); });
  EXPECT_EQ(chooser.trials(), 1);
}

}  // namespace
}  // namespace mg
