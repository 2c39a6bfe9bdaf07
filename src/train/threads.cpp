#include "train/threads.h"

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
    case Phase::start:  // a run's first steps create its primitives and fill its pools
      if (++steps_since_trial_ >= kSettleSteps) start_trial();
      return;
    case Phase::chosen:
      timed_.push_back(step_seconds);
      if (static_cast<int>(timed_.size()) < kTimedSteps) return;
      chosen_seconds_ = median(timed_);
      timed_.clear();
      phase_ = Phase::other;
      running_ = other();
      untimed_left_ = 1;
      return;
    case Phase::other:
      if (untimed_left_ > 0) {
        --untimed_left_;
        return;
      }
      timed_.push_back(step_seconds);
      if (step_seconds > kHopeless * chosen_seconds_) return end_trial(false);
      if (static_cast<int>(timed_.size()) == kTimedSteps) end_trial(median(timed_) < (1.0 - kMargin) * chosen_seconds_);
      return;
    case Phase::run: {
      ++steps_since_trial_;
      recent_.push_back(step_seconds);
      if (static_cast<int>(recent_.size()) > kTimedSteps) recent_.erase(recent_.begin());
      const bool slowed =
          static_cast<int>(recent_.size()) == kTimedSteps && median(recent_) > kSlowdown * chosen_seconds_;
      if (slowed) gap_ = kFirstGap;  // the machine changed: look again soon after, too
      if (slowed || steps_since_trial_ >= gap_) start_trial();
      return;
    }
  }
}

void StepThreadChooser::start_trial() {
  phase_ = Phase::chosen;
  running_ = chosen_;
  timed_.clear();
  recent_.clear();
}

void StepThreadChooser::end_trial(bool switch_to_other) {
  if (switch_to_other) {
    chosen_ = other();
    chosen_seconds_ = median(timed_);
  }
  // A choice kept is looked at less often; a new one soon again.
  gap_ = trials_ > 0 && !switch_to_other ? std::min(2 * gap_, kLongestGap) : kFirstGap;
  ++trials_;
  running_ = chosen_;
  phase_ = Phase::run;
  steps_since_trial_ = 0;
  timed_.clear();
}

}  // namespace mg
