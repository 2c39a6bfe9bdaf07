// Formation events (issue 57, interp/formation.h) on a metrics.jsonl written by hand, whose
// events are known: accuracy crossing 0.5 up, back down (past the hysteresis) and up again,
// 0.95, a distractor tag's crossing, a head's role score jumping, a loss plateau and bump,
// and the schedule's q/k hold and random rows; read through report/run_curves.h as
// inspect-heads --timeline and serve read it, and written by report/formation_format.h.
#include <gtest/gtest.h>

#include "interp/formation.h"
#include "report/formation_format.h"
#include "report/run_curves.h"

namespace mg {
namespace {

using json = nlohmann::json;

struct Row {
  int64_t step;
  double val_loss, who, who_distractors, head_1_0_who;
};

// Steps 100..800. Loss: a plateau over 200..500 (within 0.01 of 2.5) that ends at 600, a bump
// at 700. who: 0.5 crossed at 300, fallen back under 0.45 at 500, crossed again at 600, 0.95
// at 700. who's distractor items: 0.5 at 800. Head 1.0's answer-finding on who: 0.1 -> 0.7
// at 600.
const Row kRows[] = {{100, 3.0, 0.10, 0.0, 0.10},  {200, 2.5, 0.30, 0.0, 0.10},   {300, 2.495, 0.55, 0.0, 0.10},
                     {400, 2.494, 0.52, 0.0, 0.12}, {500, 2.493, 0.40, 0.0, 0.10}, {600, 2.2, 0.60, 0.0, 0.70},
                     {700, 2.25, 0.96, 0.0, 0.72},  {800, 2.0, 0.97, 0.5, 0.75}};

RunCurves known_run() {
  RunCurves curves;
  for (const Row& r : kRows) {
    curves.add_line(json{{"step", r.step - 1}, {"loss", 3.0}}.dump());  // a training line
    json line = {{"step", r.step},
                 {"loss", r.val_loss},
                 {"val_loss", r.val_loss},
                 {"probe_accuracy", r.who},
                 {"probe_accuracy_by_kind", {{"who", r.who}}},
                 {"probe_accuracy_by_tag", {{"who", {{"no_distractor", 0.2}, {"distractors", r.who_distractors}}}}},
                 {"head_roles",
                  {{{"layer", 0}, {"head", 1}, {"previous_token", 0.9}, {"role", "previous-token"}},
                   {{"layer", 1},
                    {"head", 0},
                    {"answer_finding", 0.1},
                    {"answer_finding_by_kind", {{"who", r.head_1_0_who}}},
                    {"role", r.head_1_0_who >= 0.3 ? "answer-finding(who)" : "mixed"}}}}};
    curves.add_line(line.dump());
  }
  return curves;
}

RunSchedule known_schedule() {
  Config config;
  config.train.freeze_block0_qk_to_step = 400;
  config.data.row_start = "story";
  config.data.random_row_fraction = 0.25;
  config.data.random_rows_from_step = 700;
  return run_schedule(config);
}

TEST(FormationTest, AKnownRunsEventsAreFoundAtTheirSteps) {
  const RunCurves curves = known_run();
  ASSERT_EQ(curves.evaluation_records().size(), 8u);
  const std::vector<FormationEvent> events = find_formation_events(curves.evaluation_records(), known_schedule());
  struct Expected {
    int64_t step;
    FormationType type;
    const char* subject;
  };
  const Expected expected[] = {
      {300, FormationType::accuracy, "who"},
      {400, FormationType::schedule, "train.freeze_block0_qk_to_step"},
      {500, FormationType::accuracy, "who"},
      {600, FormationType::accuracy, "who"},
      {600, FormationType::role_jump, "L1.H0 answer_finding.who"},
      {600, FormationType::loss_plateau, "val_loss"},
      {700, FormationType::accuracy, "who"},
      {700, FormationType::loss_bump, "val_loss"},
      {700, FormationType::schedule, "data.random_rows_from_step"},
      {800, FormationType::accuracy, "who distractors"},
  };
  ASSERT_EQ(events.size(), std::size(expected)) << format_formation_events(events, "known");
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].step, expected[i].step) << i;
    EXPECT_EQ(events[i].type, expected[i].type) << i;
    EXPECT_EQ(events[i].subject, expected[i].subject) << i;
  }
  // Up at 300 from 0.30 to 0.55; down at 500 (0.40 < 0.5 - 0.05); 0.95 at 700.
  EXPECT_EQ(events[0].level, 0.5);
  EXPECT_TRUE(events[0].rising);
  EXPECT_EQ(*events[0].before, 0.30);
  EXPECT_EQ(*events[0].after, 0.55);
  EXPECT_EQ(events[0].before_step, 200);
  EXPECT_FALSE(events[2].rising);
  EXPECT_EQ(events[6].level, 0.95);
  // The hold ends at 400: between the evaluation at 400 and the one after.
  EXPECT_EQ(events[1].before_step, 400);
  EXPECT_EQ(events[1].after_step, 500);
  // The plateau began at 200 and ended where the loss fell again.
  EXPECT_EQ(events[5].level, 200.0);
  EXPECT_EQ(events[5].before_step, 500);
  EXPECT_EQ(events[5].after_step, 600);
  // Across 500 -> 600 the head that changed most is 1.0, its who score, its role renamed.
  ASSERT_FALSE(events[4].heads.empty());
  const HeadChange& most = events[4].heads.front();
  EXPECT_EQ(most.layer, 1);
  EXPECT_EQ(most.head, 0);
  EXPECT_EQ(most.score, "answer_finding.who");
  EXPECT_EQ(most.before, 0.10);
  EXPECT_EQ(most.after, 0.70);
  EXPECT_EQ(most.role_before, "mixed");
  EXPECT_EQ(most.role_after, "answer-finding(who)");
}

TEST(FormationTest, TheTextAndJsonSayEachEventWithItsHeadsAndChains) {
  std::vector<FormationEvent> events = find_formation_events(known_run().evaluation_records(), known_schedule());
  // Chains from a stand-in for --explain: at 500 who is written by L1.H1, from 600 by L1.H0.
  std::map<int64_t, Explanation> chains;
  for (const Row& r : kRows) {
    Explanation e;
    KindChain who;
    who.kind = "who";
    who.accuracy = r.who;
    who.writer = ChainHead{1, r.step >= 600 ? 0 : 1};
    who.carrier = ChainHead{0, 1};
    who.learned = r.who >= kLearnedAccuracy;
    e.kinds.push_back(who);
    chains[r.step] = e;
  }
  explain_events(events, [&](int64_t step) -> const Explanation* {
    return chains.count(step) ? &chains.at(step) : nullptr;
  });
  const std::string text = format_formation_events(events, "known");
  EXPECT_NE(text.find("who accuracy crossed 0.50 (0.300 -> 0.550)"), std::string::npos) << text;
  EXPECT_NE(text.find("block 0's queries and keys are let go (train.freeze_block0_qk_to_step)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("head L1.H0 answer_finding.who jumped (0.100 -> 0.700)"), std::string::npos) << text;
  EXPECT_NE(text.find("chain before (step 500): who: writer L1.H1, carrier L0.H1 (K), not learned 0.400"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("chain after  (step 600): who: writer L1.H0"), std::string::npos) << text;
  const nlohmann::ordered_json j = formation_events_json(events, "known");
  ASSERT_EQ(j["events"].size(), events.size());
  const auto& jump = j["events"][4];
  EXPECT_EQ(jump["type"], "role_jump");
  EXPECT_EQ(jump["step"], 600);
  EXPECT_EQ(jump["heads"][0]["head"], "L1.H0");
  EXPECT_EQ(jump["chain_before"]["kinds"][0]["writer"], "L1.H1");
  EXPECT_EQ(jump["chain_after"]["kinds"][0]["writer"], "L1.H0");
  EXPECT_TRUE(j["events"][0]["before_step"] == 200);
}

TEST(FormationTest, ARunWithoutEvaluationsHasOnlyItsScheduleAndNoHeads) {
  RunCurves curves;
  curves.add_line(R"({"step": 1, "loss": 4.0})");
  const std::vector<FormationEvent> events = find_formation_events(curves.evaluation_records(), known_schedule());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].before_step, -1);
  EXPECT_EQ(events[0].after_step, -1);
  EXPECT_TRUE(events[0].heads.empty());
  EXPECT_TRUE(formation_events_json(events, "r")["events"][0]["before_step"].is_null());
}

TEST(FormationTest, AScheduleStepTheRunDoesNotReachIsNoEvent) {
  Config config;
  config.train.freeze_block0_qk_to_step = 4000;
  config.train.max_steps = 750;  // a short run of the default schedule
  EXPECT_EQ(run_schedule(config).qk_hold_to_step, 0);
  config.train.max_steps = 19531;
  EXPECT_EQ(run_schedule(config).qk_hold_to_step, 4000);
}

}  // namespace
}  // namespace mg
