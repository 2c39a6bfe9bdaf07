#include "jobs/train_threads.h"

#include <algorithm>

namespace mg {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

StepThreadChooser::StepThreadChooser(int all)
    : all_(all), phase_(all > 1 ? Phase::start : Phase::run), running_(all), chosen_(all) {}

void StepThreadChooser::record(double step_seconds) {
  if (all_ <= 1) return;
  switch (phase_) {
    case Phase::start:  // a run's first steps create its primitives and fill its pools: not timed
      if (++steps_since_trial_ >= kSettleSteps) start_trial();
      return;
    case Phase::trial:
      if (++steps_on_candidate_ > kSettleSteps) timed_.push_back(step_seconds);
      if (static_cast<int>(timed_.size()) < kTimedSteps) return;
      trial_median_[candidate_] = median(timed_);
      timed_.clear();
      steps_on_candidate_ = 0;
      if (candidate_ == 0) {
        candidate_ = 1;
        running_ = 1;
        return;
      }
      finish_trial();
      return;
    case Phase::run: {
      ++steps_since_trial_;
      recent_.push_back(step_seconds);
      if (static_cast<int>(recent_.size()) > kTimedSteps) recent_.erase(recent_.begin());
      const double measured = trial_median_[chosen_ == all_ ? 0 : 1];
      const bool slowed = static_cast<int>(recent_.size()) == kTimedSteps && median(recent_) > kSlowdown * measured;
      if (slowed) gap_ = kFirstGap;  // the machine changed: look again soon after, too
      if (slowed || steps_since_trial_ >= gap_) start_trial();
      return;
    }
  }
}

void StepThreadChooser::start_trial() {
  phase_ = Phase::trial;
  candidate_ = 0;
  running_ = all_;
  steps_on_candidate_ = 0;
  timed_.clear();
  recent_.clear();
}

void StepThreadChooser::finish_trial() {
  const int previous = chosen_;
  chosen_ = trial_median_[1] < (1.0 - kMargin) * trial_median_[0] ? 1 : all_;
  // A choice confirmed is looked at less often; a changed one soon again.
  gap_ = choices_ > 0 && chosen_ == previous ? std::min(2 * gap_, kLongestGap) : kFirstGap;
  ++choices_;
  running_ = chosen_;
  phase_ = Phase::run;
  steps_since_trial_ = 0;
}

}  // namespace mg
