// Issue 14's measuring tools: story rows (data.row_start "story"), the probe's accuracy per
// question kind in score_probe, metrics.jsonl and `mini-gpt eval --probe`, and the fresh
// probe sets of scripts/make_corpus.py --probe-seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/head_logging.h"
#include "config_support.h"
#include "core/error.h"
#include "data/batch_sampler.h"
#include "data/utf8.h"
#include "error_support.h"
#include "inference/evaluate.h"
#include "io/config.h"
#include "model_support.h"
#include "test_support.h"
#include "train/setup.h"
#include "train/train.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using test::input_error_of;
using nlohmann::json;

// ---------------------------------------------------------------- story rows

// Stories "1 2 .. k 0" of lengths 3..7 with separator id 0: ids 0 at known places.
std::vector<int32_t> stories_split(std::vector<int64_t>* starts_after_separator) {
  std::vector<int32_t> ids = {5, 6};  // the tail of a story cut by the split: no start at 0
  for (int story = 0; story < 40; ++story) {
    ids.push_back(0);
    starts_after_separator->push_back(static_cast<int64_t>(ids.size()));
    for (int i = 0; i < 3 + story % 5; ++i) ids.push_back(1 + i);
  }
  return ids;
}

TEST(StoryRows, EveryRowStartsRightAfterASeparatorAndEveryFittingStartIsDrawn) {
  std::vector<int64_t> story_starts;
  const std::vector<int32_t> split = stories_split(&story_starts);
  const int64_t T = 8, B = 64, n = static_cast<int64_t>(split.size());
  BatchSampler sampler(split, T, B, 5, RowStart::after(0));
  std::set<int64_t> fitting;  // starts that leave room for T + 1 ids
  for (int64_t s : story_starts)
    if (s + T + 1 <= n) fitting.insert(s);
  EXPECT_EQ(sampler.row_count(), static_cast<int64_t>(fitting.size()));

  // Row b's inputs are split[s .. s + T), its targets split[s + 1 .. s + T]: find s by content.
  std::set<int64_t> drawn;
  std::vector<int32_t> inputs(B * T), targets(B * T);
  for (int draw = 0; draw < 10; ++draw) {
    sampler.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) {
      EXPECT_EQ(inputs[b * T], 1) << "a row starts with its story's first symbol";
      int64_t found = -1;
      for (int64_t s : fitting)
        if (std::equal(split.begin() + s, split.begin() + s + T, inputs.begin() + b * T) &&
            std::equal(split.begin() + s + 1, split.begin() + s + T + 1, targets.begin() + b * T) &&
            !drawn.count(s) && found < 0)
          found = s;
      if (found < 0)  // a repeat of a start already drawn: must still match one
        for (int64_t s : drawn)
          if (std::equal(split.begin() + s, split.begin() + s + T, inputs.begin() + b * T)) found = s;
      ASSERT_GE(found, 0) << "row " << b << " is no story-start window";
      drawn.insert(found);
    }
  }
  EXPECT_EQ(drawn.size(), fitting.size()) << "640 rows over " << fitting.size() << " starts reach them all";
}

TEST(StoryRows, RandomRowsStayTheDefaultAndNoStartIsAnInputError) {
  std::vector<int32_t> split(100);
  for (int i = 0; i < 100; ++i) split[i] = 1 + i % 7;  // no separator 0 at all
  BatchSampler anywhere(split, 8, 2, 1);
  EXPECT_EQ(anywhere.row_count(), 92);
  EXPECT_EQ(input_error_of([&] { BatchSampler(split, 8, 2, 1, RowStart::after(0)); }),
            "no story start in a split of 100 symbols: data.row_start \"story\" needs a separator followed by "
            "block_size + 1 = 9 symbols");
}

TEST(StoryRows, ConfigKeyAcceptsRandomAndStoryOnly) {
  Config config = load_config(test::source_dir() / "configs" / "tiny.json");
  EXPECT_EQ(config.data.row_start, "random");
  apply_override(config, "data.row_start=story");
  EXPECT_EQ(config.data.row_start, "story");
  EXPECT_EQ(config_to_json(config)["data"]["row_start"], "story");
  const std::string error = input_error_of([&] { apply_override(config, "data.row_start=lines"); });
  EXPECT_NE(error.find("data.row_start"), std::string::npos) << error;
  EXPECT_EQ(config.data.row_start, "story") << "a rejected override leaves the config as it was";
}

// data.random_row_fraction: the first rows of every batch start at a story's start, the
// last anywhere_rows anywhere (the windows a generation past block_size reads).
TEST(StoryRows, MixedBatchesDrawTheirLastRowsAnywhere) {
  std::vector<int64_t> story_starts;
  const std::vector<int32_t> split = stories_split(&story_starts);
  const int64_t T = 8, B = 8, anywhere = 3, n = static_cast<int64_t>(split.size());
  BatchSampler sampler(split, T, B, 11, RowStart::after(0, anywhere));
  EXPECT_EQ(sampler.row_count(), static_cast<int64_t>(story_starts.size()) - 1) << "the last story does not fit";
  std::vector<int32_t> inputs(B * T), targets(B * T);
  int story_rows = 0, mid_story_rows = 0;
  for (int draw = 0; draw < 200; ++draw) {
    sampler.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) {
      // Each row is a window of the split: find a start s whose T + 1 ids it holds.
      std::vector<int64_t> starts;
      for (int64_t s = 0; s + T + 1 <= n; ++s)
        if (std::equal(split.begin() + s, split.begin() + s + T, inputs.begin() + b * T) &&
            std::equal(split.begin() + s + 1, split.begin() + s + T + 1, targets.begin() + b * T))
          starts.push_back(s);
      ASSERT_FALSE(starts.empty()) << "row " << b << " is no window of the split";
      if (b < B - anywhere) {
        EXPECT_EQ(inputs[b * T], 1) << "a story row starts with its story's first symbol";
        ++story_rows;
      } else if (inputs[b * T] != 1) {
        ++mid_story_rows;
      }
    }
  }
  EXPECT_EQ(story_rows, 200 * (B - anywhere));
  // A uniform start falls on a story's first symbol 40 times in 227 positions: the other
  // 600 * 187/227 = 494 rows (expected) start mid-story.
  EXPECT_GT(mid_story_rows, 420);
  EXPECT_LT(mid_story_rows, 570);

  // anywhere_rows >= batch_size: every row anywhere; the default, 0: every row a story row.
  BatchSampler all(split, T, B, 11, RowStart::after(0, B + 5));
  BatchSampler none(split, T, B, 11, RowStart::after(0));
  int all_mid = 0;
  for (int draw = 0; draw < 20; ++draw) {
    all.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) all_mid += inputs[b * T] != 1;
    none.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) EXPECT_EQ(inputs[b * T], 1);
  }
  EXPECT_GT(all_mid, 100) << "of 160 rows drawn anywhere, about 132 start mid-story";
}

// data.random_rows_from_step: the train loop sets the mixed rows per step; before that step
// every row is a story row.
TEST(StoryRows, AnywhereRowsCanBeSwitchedOnLater) {
  std::vector<int64_t> story_starts;
  const std::vector<int32_t> split = stories_split(&story_starts);
  const int64_t T = 8, B = 8;
  BatchSampler sampler(split, T, B, 11, RowStart::after(0, 4));
  std::vector<int32_t> inputs(B * T), targets(B * T);
  sampler.set_anywhere_rows(0);
  for (int draw = 0; draw < 20; ++draw) {
    sampler.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) EXPECT_EQ(inputs[b * T], 1) << "story rows only";
  }
  sampler.set_anywhere_rows(4);
  int mid_story = 0;
  for (int draw = 0; draw < 50; ++draw) {
    sampler.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) {
      if (b < B - 4) EXPECT_EQ(inputs[b * T], 1);
      else mid_story += inputs[b * T] != 1;
    }
  }
  EXPECT_GT(mid_story, 130) << "of 200 rows drawn anywhere, about 165 start mid-story";
  BatchSampler anywhere(split, T, B, 11);
  anywhere.set_anywhere_rows(0);  // no story starts listed: every row stays a window anywhere
  int anywhere_mid = 0;
  for (int draw = 0; draw < 20; ++draw) {
    anywhere.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) anywhere_mid += inputs[b * T] != 1;
  }
  EXPECT_GT(anywhere_mid, 100);

  Config config = load_config(test::source_dir() / "configs" / "tiny.json");
  EXPECT_EQ(config.data.random_rows_from_step, 0);
  apply_override(config, "data.random_rows_from_step=7000");
  EXPECT_EQ(config_to_json(config)["data"]["random_rows_from_step"], 7000);
  const std::string error = input_error_of([&] { apply_override(config, "data.random_rows_from_step=-1"); });
  EXPECT_NE(error.find("data.random_rows_from_step must be in [0, "), std::string::npos) << error;
}

// data.early_story_starts: while the early phase is on, story rows start only at the
// stories whose first id is listed (here kind A, first id 7, one story in three; kind B
// starts with 8); off, every story is drawn again; the rows drawn anywhere stay anywhere.
TEST(StoryRows, EarlyStoriesAreDrawnAloneWhileTheEarlyPhaseIsOn) {
  std::vector<int32_t> split = {5, 6};  // a cut story's tail: no start at 0
  std::set<int64_t> kind_a_starts;
  for (int story = 0; story < 60; ++story) {
    split.push_back(0);
    if (story % 3 == 0) kind_a_starts.insert(static_cast<int64_t>(split.size()));
    split.push_back(story % 3 == 0 ? 7 : 8);
    for (int i = 0; i < 4 + story % 4; ++i) split.push_back(1 + i);
  }
  const int64_t T = 8, B = 8, n = static_cast<int64_t>(split.size());
  RowStart row_start = RowStart::after(0, 2);
  row_start.early_first_ids = {7};
  BatchSampler sampler(split, T, B, 3, row_start);
  std::vector<int32_t> inputs(B * T), targets(B * T);
  sampler.set_early_stories(true);
  std::set<int64_t> drawn;  // the starts of the kind-A rows, found by content
  int early_mid_story = 0;
  for (int draw = 0; draw < 100; ++draw) {
    sampler.next(inputs, targets);
    for (int64_t b = 0; b < B - 2; ++b) {
      ASSERT_EQ(inputs[b * T], 7) << "draw " << draw << " row " << b << ": only kind-A stories early";
      for (int64_t s : kind_a_starts)
        if (s + T + 1 <= n && std::equal(split.begin() + s, split.begin() + s + T, inputs.begin() + b * T))
          drawn.insert(s);
    }
    for (int64_t b = B - 2; b < B; ++b) early_mid_story += inputs[b * T] != 7 && inputs[b * T] != 8;
  }
  EXPECT_EQ(drawn.size(), 20u) << "each of the 20 kind-A stories is drawn in 600 rows";
  EXPECT_GT(early_mid_story, 120) << "of 200 rows drawn anywhere, about 160 start mid-story";

  sampler.set_early_stories(false);
  int kind_a = 0, kind_b = 0;
  for (int draw = 0; draw < 100; ++draw) {
    sampler.next(inputs, targets);
    for (int64_t b = 0; b < B - 2; ++b) {
      kind_a += inputs[b * T] == 7;
      kind_b += inputs[b * T] == 8;
    }
  }
  EXPECT_EQ(kind_a + kind_b, 600) << "every story row starts with its story's first id";
  EXPECT_GT(kind_a, 150) << "20 of the 59 stories that fit are kind A: about 203 of 600 rows";
  EXPECT_LT(kind_a, 260);

  // Without early ids the early phase draws every story; ids no story starts with are refused.
  BatchSampler plain(split, T, B, 3, RowStart::after(0));
  plain.set_early_stories(true);
  int plain_b = 0;
  for (int draw = 0; draw < 20; ++draw) {
    plain.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) plain_b += inputs[b * T] == 8;
  }
  EXPECT_GT(plain_b, 80) << "about 107 of 160 rows are kind B";
  row_start.early_first_ids = {1, 9};
  EXPECT_EQ(input_error_of([&] { BatchSampler none(split, T, B, 3, row_start); }),
            "no story of the split starts with one of the 2 early story starts (data.early_story_starts)");
}

TEST(StoryRows, EarlyStoryStartsAreStoryRowSymbolsOfTheCorpus) {
  Config config = load_config(test::source_dir() / "configs" / "tiny.json");
  EXPECT_EQ(config.data.early_story_starts, "");
  EXPECT_EQ(config.data.early_stories_to_step, 0);
  EXPECT_EQ(input_error_of([&] { apply_override(config, "data.early_story_starts=小"); }),
            "--set data.early_story_starts=小: data.early_story_starts must be \"\" unless data.row_start is "
            "\"story\" (\"random\" rows start anywhere), found \"小\"");
  apply_overrides(config, {"data.row_start=story", "data.early_story_starts=小红", "data.early_stories_to_step=2000"},
                  "tiny.json");
  EXPECT_EQ(config_to_json(config)["data"]["early_story_starts"], "小红");
  EXPECT_EQ(config_to_json(config)["data"]["early_stories_to_step"], 2000);
  const std::string error = input_error_of([&] { apply_override(config, "data.early_stories_to_step=-1"); });
  EXPECT_NE(error.find("data.early_stories_to_step must be in [0, "), std::string::npos) << error;

  // The symbols become the corpus's ids, in the order written; one the corpus lacks is named.
  const Vocab vocab = Vocab::from_text(U"\n小红王的");
  const RowStart row_start = training_row_start(RowStart::after(*vocab.find(U'\n')), config, vocab);
  EXPECT_EQ(row_start.early_first_ids, (std::vector<int32_t>{*vocab.find(U'小'), *vocab.find(U'红')}));
  config.data.early_story_starts = "小蓝";
  config.data.path = "corpus.txt";
  EXPECT_EQ(input_error_of([&] { training_row_start(RowStart::after(0), config, vocab); }),
            "data.early_story_starts holds U+84DD, which the corpus corpus.txt does not");
}

TEST(StoryRows, RandomRowFractionIsAShareOfStoryBatchesOnly) {
  Config config = load_config(test::source_dir() / "configs" / "tiny.json");
  EXPECT_EQ(config.data.random_row_fraction, 0.0);
  EXPECT_EQ(input_error_of([&] { apply_override(config, "data.random_row_fraction=0.25"); }),
            "--set data.random_row_fraction=0.25: data.random_row_fraction must be 0 unless data.row_start is "
            "\"story\" (\"random\" rows all start anywhere), found 0.25");
  apply_overrides(config, {"data.row_start=story", "data.random_row_fraction=0.25"}, "tiny.json");
  EXPECT_EQ(config.data.random_row_fraction, 0.25);
  EXPECT_EQ(config_to_json(config)["data"]["random_row_fraction"], 0.25);
  const std::string error = input_error_of([&] { apply_override(config, "data.random_row_fraction=1.5"); });
  EXPECT_NE(error.find("data.random_row_fraction must be in [0, 1], found 1.5"), std::string::npos) << error;
  EXPECT_EQ(config.data.random_row_fraction, 0.25) << "a rejected override leaves the config as it was";
}

// ---------------------------------------------------------------- probe accuracy per kind

// head.weight = 0 makes every logit 0: the arg-max is id 0 ('a') for every prompt.
Gpt zero_head_model() {
  Gpt model = test::small_model(/*n_layer=*/1, /*n_embd=*/8, /*block_size=*/8, /*vocab_size=*/4, /*seed=*/6);
  model.parameters().get("head.weight").value().fill(0.0f);
  return model;
}

TEST(ProbeByKind, CountsEachKindInOrderOfFirstAppearance) {
  Gpt model = zero_head_model();
  const Vocab vocab = Vocab::from_text(U"abcd");
  std::vector<ProbeItem> probes;
  // 70 items: kind "who" for i % 2 == 0, "what" else; answer 'a' (right) when i % 5 == 0,
  // and one item whose answer is outside the vocabulary (always wrong).
  for (int i = 0; i < 70; ++i)
    probes.push_back({std::u32string(1 + i % 4, U'b'), i % 5 == 0 ? U'a' : U'c', i % 2 == 0 ? "who" : "what"});
  probes.push_back({U"bb", U'z', "colour"});
  const ProbeScore score = score_probe(model, vocab, probes);
  EXPECT_EQ(score.kinds, (std::vector<std::string>{"who", "what", "colour"}));
  EXPECT_EQ(score.items, 71);
  EXPECT_EQ(score.correct, 14);  // i = 0, 5, ..., 65
  EXPECT_EQ(score.kind_items, (std::vector<int64_t>{35, 35, 1}));
  EXPECT_EQ(score.kind_correct, (std::vector<int64_t>{7, 7, 0}));  // even and odd multiples of 5
  EXPECT_DOUBLE_EQ(score.kind_accuracy(0), 0.2);
  EXPECT_DOUBLE_EQ(score.accuracy(), 14.0 / 71.0);
  EXPECT_EQ(score_probe(model, vocab, probes).correct, 14);
  for (int parts : {2, 3}) {  // the shares' right answers add up, kind by kind
    std::vector<int64_t> total(3, 0);
    for (int part = 0; part < parts; ++part) {
      const ProbeScore share = score_probe(model, vocab, probes, EvalShare{part, parts});
      EXPECT_EQ(share.kind_items, score.kind_items);
      for (size_t k = 0; k < 3; ++k) total[k] += share.kind_correct[k];
    }
    EXPECT_EQ(total, score.kind_correct) << parts << " parts";
  }
}

TEST(ProbeByKind, CountsItemsWithAndWithoutDistractorsApart) {
  // The zero-head model predicts 'a' everywhere. 40 "who" items: distractors i % 4 (0, 1,
  // 2, 3), answer 'a' (right) when i % 5 == 0; 10 "what" items untagged.
  Gpt model = zero_head_model();
  const Vocab vocab = Vocab::from_text(U"abcd");
  std::vector<ProbeItem> probes;
  for (int i = 0; i < 40; ++i) {
    ProbeItem item{std::u32string(1 + i % 3, U'b'), i % 5 == 0 ? U'a' : U'c', "who"};
    item.distractors = i % 4;
    item.cue = "colour";
    probes.push_back(item);
  }
  for (int i = 0; i < 10; ++i) probes.push_back({U"b", U'a', "what"});
  const ProbeScore score = score_probe(model, vocab, probes);
  // Right: i = 0, 5, ..., 35; with no distractor (i % 4 == 0): i = 0, 20 of the 10 such.
  EXPECT_EQ(score.alone_items, (std::vector<int64_t>{10, 0}));
  EXPECT_EQ(score.alone_correct, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(score.distracted_items, (std::vector<int64_t>{30, 0}));
  EXPECT_EQ(score.distracted_correct, (std::vector<int64_t>{6, 0}));  // 5, 10, 15, 25, 30, 35
  EXPECT_EQ(score.cues, (std::vector<std::string>{"colour", ""}));
  const std::vector<TagAccuracy> tags = tag_accuracies(score);
  ASSERT_EQ(tags.size(), 1u);  // "what" has no tagged item
  EXPECT_EQ(tags[0].kind, "who");
  EXPECT_DOUBLE_EQ(tags[0].no_distractor, 0.2);
  EXPECT_DOUBLE_EQ(tags[0].distractors, 0.2);
  EXPECT_EQ(tags[0].distractor_items, 30);
}

TEST(ProbeByKind, ReadsTheDistractorTagAndRefusesABadOne) {
  const fs::path dir = test::fresh_dir("probe-tags");
  const fs::path good = dir / "good.jsonl", bad = dir / "bad.jsonl";
  std::ofstream(good) << R"({"prompt": "ab", "answer": "a", "kind": "who", "distractors": 2, "cue": "colour"})" "\n"
                      << R"({"prompt": "ab", "answer": "b", "kind": "who"})" "\n";
  const std::vector<ProbeItem> items = load_probe_set(good);
  EXPECT_EQ(items[0].distractors, 2);
  EXPECT_EQ(items[0].cue, "colour");
  EXPECT_EQ(items[1].distractors, -1);
  EXPECT_EQ(items[1].cue, "");
  for (const char* value : {"-1", "1.5", "\"2\"", "100000"}) {
    std::ofstream(bad) << R"({"prompt": "ab", "answer": "a", "kind": "who", "distractors": )" << value << "}\n";
    try {
      load_probe_set(bad);
      ADD_FAILURE() << value << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(":1: \"distractors\" must be an integer in 0..1000"), std::string::npos)
          << e.what();
    }
  }
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- in a run and in eval

std::vector<json> metric_lines(const fs::path& run) {
  std::vector<json> rows;
  std::istringstream in(test::read_text(run / "metrics.jsonl"));
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  return rows;
}

TEST(ProbeByKind, MetricsCarryItAtEveryEvaluationAndEvalScoresAnyProbeFile) {
  const fs::path dir = test::fresh_dir("probe-by-kind");
  TrainRequest request;
  request.config = test::tiny_config(dir / "run");
  request.config.train.max_steps = 60;
  request.config.train.threads = 1;
  request.config.data.row_start = "story";
  request.on_evaluation = head_logging().on_evaluation;  // as `train` logs the heads
  const TrainResult result = train(request);
  ASSERT_EQ(result.probe_accuracy_by_kind.size(), 3u);

  const std::vector<json> rows = metric_lines(dir / "run");
  int evaluations = 0;
  for (const json& row : rows) {
    if (!row.contains("val_loss")) {
      EXPECT_FALSE(row.contains("probe_accuracy_by_kind"));
      continue;
    }
    ++evaluations;
    ASSERT_TRUE(row.contains("probe_accuracy_by_kind")) << row.dump();
    const json& by_kind = row["probe_accuracy_by_kind"];
    EXPECT_EQ(by_kind.size(), 3u);
    for (const char* kind : {"who", "colour", "what"}) EXPECT_TRUE(by_kind.contains(kind)) << row.dump();
    EXPECT_FALSE(row.contains("probe_accuracy_by_tag")) << "the shipped probe has no distractor tags";
  }
  EXPECT_EQ(evaluations, 2);  // tiny.json evaluates every 50 steps, and at the last step

  // eval --probe on the same probe file gives the run's last figures; with --text-file too.
  const std::string checkpoint = (dir / "run" / "latest.safetensors").string();
  const std::string probe = (test::source_dir() / "data" / "probe.jsonl").string();
  const fs::path text_file = dir / "stories.txt";  // the corpus's first stories
  const std::string corpus = test::read_text(test::source_dir() / "data" / "corpus.txt");
  std::ofstream(text_file) << corpus.substr(0, corpus.rfind('\n', 3000) + 1);  // whole stories, whole symbols
  auto both = test::run_mini_gpt({"eval", "--checkpoint", checkpoint, "--probe", probe, "--text-file",
                                  text_file.string(), "--json", "--threads", "1"}, dir);
  ASSERT_EQ(both.status, 0) << both.err;
  const json figures = json::parse(both.out);
  EXPECT_TRUE(figures.contains("loss") && figures.contains("predictions")) << both.out;
  EXPECT_EQ(figures["probe_items"], 500);
  EXPECT_NEAR(figures["probe_accuracy"].get<double>(), *result.probe_accuracy, 1e-12);

  // Tagged items (corpus v6's "distractors"): each kind's items with none and with some are
  // scored apart, and each part equals eval on a file holding that part alone.
  {
    std::istringstream shipped(test::read_text(probe));
    std::ofstream all(dir / "tagged.jsonl"), alone(dir / "alone.jsonl"), distracted(dir / "distracted.jsonl");
    int i = 0;
    for (std::string line; std::getline(shipped, line) && i < 90; ++i) {
      const std::string tagged = line.substr(0, line.size() - 1) + ", \"distractors\": " + std::to_string(i % 3) + "}";
      all << tagged << "\n";
      (i % 3 == 0 ? alone : distracted) << tagged << "\n";
    }
  }
  const auto eval_json = [&](const char* file) {
    auto r = test::run_mini_gpt({"eval", "--checkpoint", checkpoint, "--probe", (dir / file).string(), "--json",
                                 "--threads", "1"}, dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out);
  };
  const json tagged = eval_json("tagged.jsonl"), alone = eval_json("alone.jsonl"), distracted = eval_json("distracted.jsonl");
  ASSERT_TRUE(tagged.contains("probe_accuracy_by_tag")) << tagged.dump();
  for (const auto& [kind, tags] : tagged["probe_accuracy_by_tag"].items()) {
    EXPECT_NEAR(tags["no_distractor"].get<double>(), alone["probe_accuracy_by_kind"][kind].get<double>(), 1e-12) << kind;
    EXPECT_NEAR(tags["distractors"].get<double>(), distracted["probe_accuracy_by_kind"][kind].get<double>(), 1e-12)
        << kind;
    EXPECT_EQ(tags["no_distractor_items"].get<int>() + tags["distractor_items"].get<int>(),
              [&] {
                int n = 0;  // the kind's items in the tagged file
                std::istringstream lines(test::read_text(dir / "tagged.jsonl"));
                for (std::string line; std::getline(lines, line);) n += json::parse(line)["kind"] == kind;
                return n;
              }()) << kind;
  }
  auto tagged_text = test::run_mini_gpt({"eval", "--checkpoint", checkpoint, "--probe",
                                         (dir / "tagged.jsonl").string(), "--threads", "1"}, dir);
  EXPECT_NE(tagged_text.out.find("no distractor"), std::string::npos) << tagged_text.out;
  for (const auto& [kind, accuracy] : result.probe_accuracy_by_kind)
    EXPECT_NEAR(figures["probe_accuracy_by_kind"][kind].get<double>(), accuracy, 1e-12) << kind;

  // Every evaluation logs each head's role scores; the last one's are inspect-heads --roles
  // of the checkpoint written at that step.
  const json& last = rows.back();
  ASSERT_TRUE(last.contains("head_roles")) << last.dump();
  const json& logged = last["head_roles"];
  auto roles = test::run_mini_gpt({"inspect-heads", "--checkpoint", checkpoint, "--roles", "--probe", probe,
                                   "--format", "json", "--threads", "1"}, dir);
  ASSERT_EQ(roles.status, 0) << roles.err;
  const json measured = json::parse(roles.out)["heads"];
  ASSERT_EQ(logged.size(), measured.size());
  ASSERT_EQ(logged.size(), static_cast<size_t>(request.config.model.n_layer * request.config.model.n_head));
  for (size_t i = 0; i < logged.size(); ++i) {
    const json& want = measured[i]["roles"];
    EXPECT_EQ(logged[i]["layer"], measured[i]["layer"]);
    EXPECT_EQ(logged[i]["head"], measured[i]["head"]);
    EXPECT_FALSE(logged[i].contains("accuracy_drop"));  // ablation is not run at every evaluation
    for (const char* key : {"previous_token", "current_token", "first_position", "induction", "answer_finding",
                            "copy_forward"})
      EXPECT_NEAR(logged[i][key].get<double>(), want[key].get<double>(), 1e-9) << i << " " << key;
    EXPECT_EQ(logged[i]["role"], want["role"]);
    ASSERT_EQ(logged[i]["answer_finding_by_kind"].size(), 3u);
    for (const char* kind : {"who", "colour", "what"})
      EXPECT_NEAR(logged[i]["answer_finding_by_kind"][kind].get<double>(),
                  want["answer_finding_by_kind"][kind].get<double>(), 1e-9) << kind;
  }
  for (const json& row : rows) EXPECT_EQ(row.contains("head_roles"), row.contains("val_loss")) << row.dump();

  auto text = test::run_mini_gpt({"eval", "--checkpoint", checkpoint, "--probe", probe, "--threads", "1"}, dir);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out.rfind("probe accuracy ", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("who"), std::string::npos) << text.out;

  auto neither = test::run_mini_gpt({"eval", "--checkpoint", checkpoint}, dir);
  EXPECT_EQ(neither.status, 2);
  EXPECT_NE(neither.err.find("--probe"), std::string::npos) << neither.err;
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- fresh probe sets

std::string python() {
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (std::system((std::string("command -v ") + candidate + " >/dev/null 2>&1").c_str()) == 0) return candidate;
  return "";
}

TEST(FreshProbe, AnotherSeedGivesOtherHeldOutItemsOfEveryKindReproducibly) {
  const std::string py = python();
  if (py.empty()) GTEST_SKIP() << "no python3";
  const fs::path dir = test::fresh_dir("fresh-probe");
  const std::string script = (test::source_dir() / "scripts" / "make_corpus.py").string();
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    const std::string command = py + " '" + script + "' --probe-seed 7 --probe-items 120 --probe-out '" +
                                (dir / name).string() + "' >/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  const std::string fresh = test::read_text(dir / "a.jsonl");
  EXPECT_EQ(fresh, test::read_text(dir / "b.jsonl")) << "same seed, same bytes";
  const std::string shipped = test::read_text(test::source_dir() / "data" / "probe.jsonl");
  std::istringstream lines(fresh);
  std::set<std::string> kinds;
  int items = 0, in_shipped = 0;
  for (std::string line; std::getline(lines, line); ++items) {
    const json item = json::parse(line);
    EXPECT_EQ(item.size(), 4u) << line;  // prompt, answer, kind, source
    const std::u32string prompt = decode_utf8(item["prompt"].get<std::string>(), "prompt");
    EXPECT_EQ(encode_utf8(prompt.substr(item["source"].get<size_t>(), 1)), item["answer"]) << line;
    kinds.insert(item["kind"].get<std::string>());
    if (shipped.find(line) != std::string::npos) ++in_shipped;
  }
  EXPECT_EQ(items, 120);
  EXPECT_EQ(kinds, (std::set<std::string>{"who", "colour", "what"}));
  EXPECT_LT(in_shipped, 3) << "another seed's stories are other stories";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mg
