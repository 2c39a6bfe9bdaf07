// `mini-gpt lesson 12` against lesson 12's printed numbers, and against PyTorch itself where
// Debian's python3-torch is installed (scripts/torch_lesson12.py, run by /usr/bin/python3;
// that part is skipped without it). The known answers are the lesson's; the weights are the
// values PyTorch 1.13 prints for torch.manual_seed(42) and four nn.Linear(4, 4, bias=False).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "interp/lesson.h"
#include "interp/torch_init.h"
#include "report/lesson_format.h"
#include "report/text.h"
#include "test_support.h"

namespace mg {
namespace {

using nlohmann::json;

// torch.manual_seed(42); nn.Linear(4, 4, bias=False).weight.flatten().tolist(), the first and the fourth.
const std::vector<double> kTorchQProj{0.3822692632675171,   0.4150039553642273,   -0.11713624000549316, 0.45930564403533936,
                                      -0.10955178737640381, 0.10089534521102905,  -0.24342751502990723, 0.2936413288116455,
                                      0.4407714605331421,   -0.3668140769004822,  0.43459808826446533,  0.09357964992523193,
                                      0.3694044351577759,   0.06771528720855713,  0.24109405279159546,  -0.07059550285339355};
const std::vector<double> kTorchOutProjLastRow{0.03148186, -0.34127009, 0.15417600, -0.17219114};  // printed at 8 decimals

TEST(TorchInitTest, GeneratorIsTheStandardMt19937) {
  std::mt19937 standard;  // the standard's check: the 10000th output of the default seed 5489
  standard.discard(9999);
  EXPECT_EQ(standard(), 4123659995u);
  TorchCpuGenerator generator(5489);
  for (int i = 0; i < 9999; ++i) generator.random();
  EXPECT_EQ(generator.random(), 4123659995u);
}

TEST(TorchInitTest, KaimingBoundOfALinearLayerIsOneOverSqrtFanIn) {
  EXPECT_NEAR(kaiming_uniform_bound(4, std::sqrt(5.0)), 0.5, 1e-15);
  EXPECT_NEAR(kaiming_uniform_bound(64, std::sqrt(5.0)), 0.125, 1e-15);
}

TEST(TorchInitTest, LinearWeightsAreTheOnesPyTorchDrawsForSeed42) {
  TorchCpuGenerator generator(42);
  const Tensor q = torch_linear_weight(generator, 4, 4);
  ASSERT_EQ(q.shape(), (Shape{4, 4}));
  for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(q[i], static_cast<float>(kTorchQProj[i])) << "q_proj element " << i;
  torch_linear_weight(generator, 4, 4);
  torch_linear_weight(generator, 4, 4);
  const Tensor out = torch_linear_weight(generator, 4, 4);
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(out[12 + i], kTorchOutProjLastRow[i], 5e-9) << "out_proj element " << 12 + i;
}

TEST(LessonTest, EveryNumberTheLessonPrintsAgrees) {
  const Lesson12 lesson = run_lesson12();
  ASSERT_GE(lesson.checks.size(), 25u);
  for (const auto& [section, check] : lesson.checks) EXPECT_TRUE(check.agrees()) << section << ": " << check.what;
  EXPECT_TRUE(lesson.all_agree());
}

TEST(LessonTest, OneRowCannotReachTheTargetAndTwoHeadsDo) {
  const OneRowLimit r = run_lesson12().one_row;
  EXPECT_DOUBLE_EQ(r.a_first, 0.8);
  EXPECT_NEAR(r.a_second, 0.2, 1e-15);
  EXPECT_NEAR(r.with_a_first[1], 0.4, 1e-15);   // a = 0.8 misses the second coordinate
  EXPECT_NEAR(r.with_a_second[0], 0.2, 1e-15);  // a = 0.2 misses the first
  // The nearest point of the segment {[a, 2 - 2a]}: a = 0.32, [0.32, 1.36], sqrt(0.48^2 + 0.24^2) away.
  EXPECT_NEAR(r.nearest_a, 0.32, 1e-12);
  EXPECT_NEAR(r.nearest_distance, std::sqrt(0.48 * 0.48 + 0.24 * 0.24), 1e-12);
  ASSERT_EQ(r.two_heads.shape(), (Shape{1, 1, 2}));
  EXPECT_NEAR(r.two_heads[0], 0.8, 1e-7);
  EXPECT_NEAR(r.two_heads[1], 1.6, 1e-7);
}

TEST(LessonTest, FixedRandomParametersGiveTheLessonsRowsAtPositionOne) {
  const RandomProjections r = run_lesson12().random;
  // PyTorch 1.13's float64 softmax of the float32 q and k (scripts/torch_lesson12.py); ours projects
  // in double too, so the two differ by 6e-10 at most.
  const double head0[] = {0.002978380303431563, 0.9970216196965686, 0.0};
  const double head1[] = {0.9999975511958533, 2.4488041465881367e-06, 0.0};
  for (int s = 0; s < 3; ++s) {
    EXPECT_NEAR(r.weights_double[3 + s], head0[s], 1e-9) << s;
    EXPECT_NEAR(r.weights_double[9 + 3 + s], head1[s], 1e-9) << s;
    EXPECT_NEAR(r.weights[3 + s], head0[s], 2e-7) << s;  // float32 ops
    EXPECT_NEAR(r.weights[9 + 3 + s], head1[s], 2e-7) << s;
  }
  // The lesson's 6 decimals are the double's rounded: 0.999998 and 0.000002, not float32's 0.999997.
  EXPECT_EQ(std::string(format("%.6f", r.weights_double[9 + 3])), "0.999998");
  EXPECT_EQ(std::string(format("%.6f", r.weights_double[3])), "0.002978");
  EXPECT_EQ(r.weights[5], 0.0f);  // the key after the query: exactly 0
  EXPECT_EQ(r.loop_difference, 0.0);
  EXPECT_EQ(r.output.shape(), (Shape{1, 3, 4}));
}

TEST(LessonTest, SplitIndivisibleAndTheCheckQuestions) {
  const Lesson12 l = run_lesson12();
  EXPECT_EQ(l.split.heads.at({0, 0, 1, 0}), 4.0f);
  EXPECT_EQ(l.split.heads.at({0, 0, 1, 1}), 5.0f);
  EXPECT_EQ(l.split.heads.at({0, 1, 1, 0}), 6.0f);
  EXPECT_EQ(l.split.heads.at({0, 1, 1, 1}), 7.0f);
  EXPECT_TRUE(l.split.round_trip);
  EXPECT_TRUE(l.indivisible.refused);
  EXPECT_NE(l.indivisible.message.find("D=5"), std::string::npos) << l.indivisible.message;
  EXPECT_EQ(l.questions.one_head_shape, (Shape{1, 1, 3, 4}));
  EXPECT_EQ(l.questions.one_head_position1, (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(l.questions.correct_position1, (std::vector<double>{4, 5}));
  EXPECT_EQ(l.questions.wrong_position1, (std::vector<double>{2, 3}));
  for (const HeadCountCost& c : l.parameters.counts) {
    EXPECT_EQ(c.attention_parameters, 4 * 64 * 64) << c.heads;
    EXPECT_EQ(c.head_width * c.heads, 64);
    EXPECT_EQ(c.score_entries, c.heads * 64 * 64);
  }
}

class LessonCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(LessonCliTest, PrintsEverySectionAndRefusesOtherLessons) {
  auto r = test::run_mini_gpt({"lesson", "12"}, dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* line : {"1. One set of reading ratios", "2. Split and merge", "3. Fixed random parameters",
                           "4. More heads", "5. D = 5 into 2 heads", "6. The two check questions",
                           "head 1 at position 1 (double): [0.999998, 0.000002, 0] | [0.99999755",
                           "2. reshape without transpose: head 0, position 1: [2, 3] | [2, 3]"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_EQ(r.out.find("DIFFERS"), std::string::npos) << r.out;
  auto bad = test::run_mini_gpt({"lesson", "7"}, dir_);
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "mini-gpt: error: lesson \"7\": mini-gpt reruns lesson 12 (multi-head attention) only\n");
  bad = test::run_mini_gpt({"lesson", "12", "--format", "xml"}, dir_);
  EXPECT_EQ(bad.status, 2);
  bad = test::run_mini_gpt({"lesson"}, dir_);
  EXPECT_EQ(bad.status, 2);
}

// The JSON against PyTorch's own run, when /usr/bin/python3 can import torch.
TEST_F(LessonCliTest, JsonAgreesWithPyTorch) {
  auto r = test::run_mini_gpt({"lesson", "12", "--format", "json"}, dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const json ours = json::parse(r.out);
  EXPECT_EQ(ours["checks_agreeing"], ours["checks_total"]);
  EXPECT_EQ(ours["checks"].size(), ours["checks_total"].get<size_t>());

  const std::string command = "/usr/bin/python3 '" + (test::source_dir() / "scripts" / "torch_lesson12.py").string() +
                              "' > '" + (dir_ / "torch.json").string() + "' 2>/dev/null";
  const int raw = std::system(command.c_str());
  if (!WIFEXITED(raw) || WEXITSTATUS(raw) != 0) GTEST_SKIP() << "PyTorch not installed for /usr/bin/python3 (python3-torch)";
  const json torch = json::parse(test::read_text(dir_ / "torch.json"));
  for (const char* name : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
    const json& mine = ours["random"][name]["values"];
    const json& theirs = torch["weights"][name];
    ASSERT_EQ(mine.size(), 16u);
    for (size_t i = 0; i < 16; ++i)
      EXPECT_EQ(static_cast<float>(mine[i].get<double>()), static_cast<float>(theirs[i].get<double>())) << name << " " << i;
  }
  const json& weights = ours["random"]["weights"]["values"];  // [1,2,3,3]
  const json& weights_double = ours["random"]["weights_double"];
  for (int h = 0; h < 2; ++h)
    for (int s = 0; s < 3; ++s) {
      EXPECT_NEAR(weights[h * 9 + 3 + s].get<double>(), torch["position1_float32"][h][s].get<double>(), 2e-7);
      EXPECT_NEAR(weights_double[h * 9 + 3 + s].get<double>(), torch["position1_float64"][h][s].get<double>(), 1e-9);  // see above: 6e-10
    }
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_NEAR(ours["random"]["context"]["values"][i].get<double>(), torch["context"][i].get<double>(), 1e-5) << i;
    EXPECT_NEAR(ours["random"]["output"]["values"][i].get<double>(), torch["output"][i].get<double>(), 1e-5) << i;
  }
  EXPECT_EQ(torch["split_position1"], json({{4.0, 5.0}, {6.0, 7.0}}));
  EXPECT_EQ(ours["questions"]["one_head_position1"], torch["one_head_position1"]);
  EXPECT_EQ(ours["questions"]["correct_position1"], torch["correct_position1"]);
  EXPECT_EQ(ours["questions"]["wrong_position1"], torch["wrong_position1"]);
}

}  // namespace
}  // namespace mg
