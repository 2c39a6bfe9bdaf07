// The training run's thread choice (jobs/train_threads.h), driven by step times made up
// for each thread count: a quiet machine, a busy one, one that turns busy mid-run.
#include "jobs/train_threads.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace mg {
namespace {

using Chooser = StepThreadChooser;
constexpr int kTrialSteps = 2 * (Chooser::kSettleSteps + Chooser::kTimedSteps);

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

TEST(StepThreadChooser, OneThreadHasNothingToChoose) {
  Chooser chooser(1);
  for (int threads : run_steps(chooser, 500, [](int, int) { return 1.0; })) EXPECT_EQ(threads, 1);
  EXPECT_EQ(chooser.choices_made(), 0);
}

TEST(StepThreadChooser, QuietMachineKeepsAllThreadsAfterOneTrial) {
  Chooser chooser(2);
  const auto counts = run_steps(chooser, 100, [](int, int t) { return t == 2 ? 1.0 : 1.9; });
  // Settling steps on all threads, the trial (all threads, then one), then all threads.
  const int trial_start = Chooser::kSettleSteps;
  for (int s = 0; s < trial_start + Chooser::kSettleSteps + Chooser::kTimedSteps; ++s) EXPECT_EQ(counts[s], 2) << s;
  for (int s = trial_start + kTrialSteps / 2; s < trial_start + kTrialSteps; ++s) EXPECT_EQ(counts[s], 1) << s;
  for (int s = trial_start + kTrialSteps; s < 100; ++s) EXPECT_EQ(counts[s], 2) << s;
  EXPECT_EQ(chooser.choice(), 2);
  EXPECT_EQ(chooser.choices_made(), 1);
}

TEST(StepThreadChooser, ConfirmedChoicesAreCheckedLessOften) {
  Chooser chooser(2);
  const auto counts = run_steps(chooser, 20000, [](int, int t) { return t == 2 ? 1.0 : 1.9; });
  int one_thread_steps = 0;
  for (int threads : counts) one_thread_steps += threads == 1;
  // Gaps of 100, 200, 400, 800, then 1,600 steps: five trials in the first 1,562 steps
  // (2 settling, 5 x 12 trial steps, 1,500 between), then one per 1,612: 16 in 20,000.
  EXPECT_EQ(chooser.choices_made(), 16);
  EXPECT_EQ(one_thread_steps, 16 * kTrialSteps / 2);
}

TEST(StepThreadChooser, BusyMachineRunsOnOneThread) {
  Chooser chooser(2);
  const auto counts = run_steps(chooser, 100, [](int, int t) { return t == 2 ? 3.0 : 1.0; });
  for (int s = Chooser::kSettleSteps + kTrialSteps; s < 100; ++s) EXPECT_EQ(counts[s], 1) << s;
  EXPECT_EQ(chooser.choice(), 1);
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
  const int busy_from = 40;  // after the first trial chose all threads
  const auto counts = run_steps(chooser, 80, [&](int s, int t) { return s < busy_from ? (t == 2 ? 1.0 : 1.9) : (t == 2 ? 3.0 : 1.9); });
  EXPECT_EQ(counts[busy_from - 1], 2);
  // kTimedSteps slow steps, then a trial: all threads, then one; one is chosen.
  const int trial = busy_from + Chooser::kTimedSteps;
  EXPECT_EQ(counts[trial - 1], 2);
  for (int s = trial + kTrialSteps / 2; s < 80; ++s) EXPECT_EQ(counts[s], 1) << s;
  EXPECT_EQ(chooser.choice(), 1);
  EXPECT_EQ(chooser.choices_made(), 2);
}

TEST(StepThreadChooser, ANoisyStepAloneStartsNoTrial) {
  Chooser chooser(2);
  run_steps(chooser, 60, [](int s, int t) { return s == 40 ? 10.0 : (t == 2 ? 1.0 : 1.9); });
  EXPECT_EQ(chooser.choices_made(), 1);
}

}  // namespace
}  // namespace mg
