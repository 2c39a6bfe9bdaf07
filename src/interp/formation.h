// Formation events (inspect-heads --timeline, the end of `train`, the marks on the slider of
// `serve --run`): the moments of a training run a learner asks about, "when did this kind
// form, and which heads did it?", found from what every evaluation recorded in metrics.jsonl
// (report/run_curves.h reads it into RunEvaluation) and the run's own schedule. The events:
// - a kind's probe accuracy crossing 0.5 and 0.95 (and each distractor tag's, apart), up, or
//   back down once it has fallen FormationThresholds::accuracy_hysteresis below the level;
// - a head's role score jumping by at least role_jump between two evaluations;
// - a validation-loss bump (a rise of at least loss_bump over the evaluation before) and a
//   plateau (plateau_evaluations or more evaluations over which it fell less than
//   plateau_drop), marked where the plateau ends, or where it starts while it lasts;
// - the schedule's steps: block 0's query/key hold ending (train.freeze_block0_qk_to_step),
//   random rows starting (data.random_rows_from_step), the early stories ending.
// Each event names the heads whose role scores changed most between the evaluation before
// it and the one at or after it; explain_events adds the chain --explain finds on the
// models kept at those two evaluations (io/evaluation_models.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inference/evaluate.h"
#include "interp/explain.h"
#include "io/config.h"

namespace mg {

// One head's scores at one evaluation, by the names metrics.jsonl's head_roles gives them:
// "answer_finding", and per kind "answer_finding.who".
struct RunHeadScores {
  int64_t layer = 0, head = 0;
  std::string role;
  std::vector<std::pair<std::string, double>> scores;
};

// What one evaluation of a run recorded.
struct RunEvaluation {
  int64_t step = 0;
  double val_loss = 0.0;
  std::vector<std::pair<std::string, double>> accuracy_by_kind;  // probe file order
  std::vector<TagAccuracy> accuracy_by_tag;                      // the tagged kinds
  std::vector<RunHeadScores> heads;
};

// The steps at which the run's own schedule changes what it trains on (0: none, or at or past
// train.max_steps, where the run ends first).
struct RunSchedule {
  int64_t qk_hold_to_step = 0;        // train.freeze_block0_qk_to_step
  int64_t random_rows_from_step = 0;  // data.random_rows_from_step, when some rows are random
  int64_t early_stories_to_step = 0;  // data.early_stories_to_step, when early stories are chosen
  bool operator==(const RunSchedule&) const = default;
};
RunSchedule run_schedule(const Config& config);

struct FormationThresholds {
  std::vector<double> accuracy_levels = {0.5, 0.95};
  double accuracy_hysteresis = 0.05;  // a level is crossed again only after falling this far below it
  double role_jump = 0.3;             // a role score's change between two evaluations
  double loss_bump = 0.02;            // nats of validation loss over the evaluation before
  double plateau_drop = 0.01;         // nats: a plateau's loss falls less than this below its start
  int64_t plateau_evaluations = 4;    // evaluations a plateau spans at least
  int64_t heads_named = 3;            // heads named per event
};

// A head's largest change across an event: the score that moved most, its two values.
struct HeadChange {
  int64_t layer = 0, head = 0;
  std::string score;
  double before = 0.0, after = 0.0;
  std::string role_before, role_after;
};

enum class FormationType { accuracy, role_jump, loss_bump, loss_plateau, schedule };

struct FormationEvent {
  FormationType type = FormationType::accuracy;
  int64_t step = 0;         // where it is marked
  int64_t before_step = -1;  // the evaluation before it (-1: none, the run's first)
  int64_t after_step = -1;   // the evaluation at or after it (-1: not yet taken)
  // What moved: a kind ("who"), a kind's tag ("who distractors", "who no_distractor"), a head's
  // score ("L3.H1 answer_finding.who"), "val_loss", or the schedule key
  // ("train.freeze_block0_qk_to_step").
  std::string subject;
  std::optional<double> before, after;  // its value at before_step and after_step
  double level = 0.0;   // accuracy: the level crossed; plateau: the step it started at
  bool rising = true;   // accuracy: crossed upward
  std::vector<HeadChange> heads;  // largest change first
  // explain_events: --explain's chains on the models at before_step and after_step.
  std::optional<Explanation> chain_before, chain_after;
};

// The events of EVALUATIONS (in step order) under SCHEDULE, by step.
std::vector<FormationEvent> find_formation_events(const std::vector<RunEvaluation>& evaluations,
                                                  const RunSchedule& schedule,
                                                  const FormationThresholds& thresholds = {});

// Adds each event's chains before and after: EXPLAIN_AT(step) gives --explain's chains on the
// model kept at that evaluation, or null when none is kept (that chain stays empty). An
// event with no evaluation after it yet (a live run before a schedule step) gets none.
void explain_events(std::vector<FormationEvent>& events,
                    const std::function<const Explanation*(int64_t step)>& explain_at);

}  // namespace mg
