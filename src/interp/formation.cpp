// Formation events from a run's evaluations (interp/formation.h).
#include "interp/formation.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace mg {
namespace {

// The evaluation index of the last evaluation at or before STEP (-1: none) and of the first
// after it (-1: none).
std::pair<int64_t, int64_t> around(const std::vector<RunEvaluation>& evals, int64_t step) {
  int64_t before = -1, after = -1;
  for (size_t i = 0; i < evals.size(); ++i) {
    if (evals[i].step <= step) before = static_cast<int64_t>(i);
    else if (after < 0) after = static_cast<int64_t>(i);
  }
  return {before, after};
}

const RunHeadScores* find_head(const RunEvaluation& e, int64_t layer, int64_t head) {
  for (const RunHeadScores& h : e.heads)
    if (h.layer == layer && h.head == head) return &h;
  return nullptr;
}

// Each head's score that moved most from A to B (scores both evaluations hold), largest first.
std::vector<HeadChange> head_changes(const RunEvaluation& a, const RunEvaluation& b) {
  std::vector<HeadChange> changes;
  for (const RunHeadScores& after : b.heads) {
    const RunHeadScores* before = find_head(a, after.layer, after.head);
    if (!before) continue;
    std::optional<HeadChange> most;
    for (const auto& [name, value] : after.scores) {
      const auto it = std::find_if(before->scores.begin(), before->scores.end(),
                                   [&](const auto& s) { return s.first == name; });
      if (it == before->scores.end()) continue;
      if (!most || std::abs(value - it->second) > std::abs(most->after - most->before))
        most = HeadChange{after.layer, after.head, name, it->second, value, before->role, after.role};
    }
    if (most) changes.push_back(*most);
  }
  std::stable_sort(changes.begin(), changes.end(), [](const HeadChange& x, const HeadChange& y) {
    return std::abs(x.after - x.before) > std::abs(y.after - y.before);
  });
  return changes;
}

// A named series over the evaluations: a kind's accuracy, or a tag's.
struct Series {
  std::string name;
  std::vector<std::optional<double>> values;  // per evaluation; none where it was not recorded
};

std::vector<Series> accuracy_series(const std::vector<RunEvaluation>& evals) {
  std::vector<Series> series;
  auto value_of = [&](const std::string& name, size_t i, std::optional<double> v) {
    auto it = std::find_if(series.begin(), series.end(), [&](const Series& s) { return s.name == name; });
    if (it == series.end()) {
      series.push_back({name, std::vector<std::optional<double>>(evals.size())});
      it = series.end() - 1;
    }
    it->values[i] = v;
  };
  for (size_t i = 0; i < evals.size(); ++i) {
    for (const auto& [kind, accuracy] : evals[i].accuracy_by_kind) value_of(kind, i, accuracy);
    for (const TagAccuracy& t : evals[i].accuracy_by_tag) {
      value_of(t.kind + " no_distractor", i, t.no_distractor);
      value_of(t.kind + " distractors", i, t.distractors);
    }
  }
  return series;
}

FormationEvent event_between(FormationType type, const std::vector<RunEvaluation>& evals, int64_t before,
                             int64_t after, int64_t step) {
  FormationEvent e;
  e.type = type;
  e.step = step;
  e.before_step = before >= 0 ? evals[static_cast<size_t>(before)].step : -1;
  e.after_step = after >= 0 ? evals[static_cast<size_t>(after)].step : -1;
  return e;
}

}  // namespace

RunSchedule run_schedule(const Config& config) {
  RunSchedule s;
  s.qk_hold_to_step = config.train.freeze_block0_qk_to_step;
  const bool story_rows = config.data.row_start == "story";
  if (story_rows && config.data.random_row_fraction > 0.0) s.random_rows_from_step = config.data.random_rows_from_step;
  if (story_rows && !config.data.early_story_starts.empty()) s.early_stories_to_step = config.data.early_stories_to_step;
  // A step the run never reaches (a short run of a long schedule) is no event of it.
  for (int64_t* step : {&s.qk_hold_to_step, &s.random_rows_from_step, &s.early_stories_to_step})
    if (*step >= config.train.max_steps) *step = 0;
  return s;
}

std::vector<FormationEvent> find_formation_events(const std::vector<RunEvaluation>& evals, const RunSchedule& schedule,
                                                  const FormationThresholds& th) {
  std::vector<FormationEvent> events;
  const int64_t n = static_cast<int64_t>(evals.size());
  auto at = [&](int64_t i) -> const RunEvaluation& { return evals[static_cast<size_t>(i)]; };

  // Accuracy crossings, per series and level; a level counts as crossed again only after
  // the series fell th.accuracy_hysteresis below it (noise at the level is not an event).
  for (const Series& s : accuracy_series(evals))
    for (double level : th.accuracy_levels) {
      bool above = false;
      int64_t last = -1;  // the last evaluation that recorded the series
      for (int64_t i = 0; i < n; ++i) {
        const std::optional<double> v = s.values[static_cast<size_t>(i)];
        if (!v) continue;
        const bool crosses_up = !above && *v >= level, crosses_down = above && *v < level - th.accuracy_hysteresis;
        if (crosses_up || crosses_down) {
          FormationEvent e = event_between(FormationType::accuracy, evals, last, i, at(i).step);
          e.subject = s.name;
          if (last >= 0) e.before = s.values[static_cast<size_t>(last)];
          e.after = v;
          e.level = level;
          e.rising = crosses_up;
          events.push_back(std::move(e));
          above = crosses_up;
        }
        last = i;
      }
    }

  // Role jumps: every head's scores between consecutive evaluations.
  for (int64_t i = 1; i < n; ++i)
    for (const HeadChange& c : head_changes(at(i - 1), at(i)))
      if (std::abs(c.after - c.before) >= th.role_jump) {
        FormationEvent e = event_between(FormationType::role_jump, evals, i - 1, i, at(i).step);
        e.subject = "L" + std::to_string(c.layer) + ".H" + std::to_string(c.head) + " " + c.score;
        e.before = c.before;
        e.after = c.after;
        events.push_back(std::move(e));
      }

  // Loss bumps, then plateaus: [i, j] spans the evaluations whose loss stays within
  // th.plateau_drop below evaluation i's.
  for (int64_t i = 1; i < n; ++i)
    if (at(i).val_loss - at(i - 1).val_loss >= th.loss_bump) {
      FormationEvent e = event_between(FormationType::loss_bump, evals, i - 1, i, at(i).step);
      e.subject = "val_loss";
      e.before = at(i - 1).val_loss;
      e.after = at(i).val_loss;
      events.push_back(std::move(e));
    }
  for (int64_t i = 0; i < n;) {
    int64_t j = i;
    while (j + 1 < n && at(i).val_loss - at(j + 1).val_loss < th.plateau_drop) ++j;
    if (j - i + 1 < th.plateau_evaluations) {
      ++i;
      continue;
    }
    // Ended (the loss fell again at j + 1): marked there; still lasting: marked at its start.
    const bool ended = j + 1 < n;
    FormationEvent e = ended ? event_between(FormationType::loss_plateau, evals, j, j + 1, at(j + 1).step)
                             : event_between(FormationType::loss_plateau, evals, i, j, at(i).step);
    e.subject = "val_loss";
    e.before = at(i).val_loss;
    e.after = ended ? at(j + 1).val_loss : at(j).val_loss;
    e.level = static_cast<double>(at(i).step);
    events.push_back(std::move(e));
    i = j + 1;
  }

  // The schedule's steps, between the evaluation at or before and the one after.
  const std::pair<const char*, int64_t> schedule_steps[] = {
      {"train.freeze_block0_qk_to_step", schedule.qk_hold_to_step},
      {"data.random_rows_from_step", schedule.random_rows_from_step},
      {"data.early_stories_to_step", schedule.early_stories_to_step}};
  for (const auto& [key, step] : schedule_steps) {
    if (step <= 0) continue;
    const auto [before, after] = around(evals, step);
    FormationEvent e = event_between(FormationType::schedule, evals, before, after, step);
    e.subject = key;
    events.push_back(std::move(e));
  }

  // Each event's heads: those whose scores moved most between its two evaluations.
  for (FormationEvent& e : events) {
    if (e.before_step < 0 || e.after_step < 0) continue;
    const auto [b, unused_b] = around(evals, e.before_step);
    const auto [a, unused_a] = around(evals, e.after_step);
    std::vector<HeadChange> changes = head_changes(at(b), at(a));
    if (static_cast<int64_t>(changes.size()) > th.heads_named) changes.resize(static_cast<size_t>(th.heads_named));
    e.heads = std::move(changes);
  }
  std::stable_sort(events.begin(), events.end(), [](const FormationEvent& x, const FormationEvent& y) {
    return x.step < y.step;
  });
  return events;
}

void explain_events(std::vector<FormationEvent>& events,
                    const std::function<const Explanation*(int64_t step)>& explain_at) {
  for (FormationEvent& e : events) {
    if (e.after_step < 0) continue;  // not yet past it (a live run): nothing to compare
    if (e.before_step >= 0)
      if (const Explanation* x = explain_at(e.before_step)) e.chain_before = *x;
    if (const Explanation* x = explain_at(e.after_step)) e.chain_after = *x;
  }
}

}  // namespace mg
