// The issue-15 command lines end to end on the committed inspect fixture
// (tests/fixtures/heads_ref.safetensors: 2 layers x 2 heads, block_size 16): --trace,
// --roles (table, JSON, mean-ablation), --circuits with --svg, the "roles" object of
// --format json, eval --ablate, and their one-line errors.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mg {
namespace {

using nlohmann::json;
using test::run_mini_gpt;

class HeadCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "probe.jsonl") << R"({"prompt": "小丁拿着红色的苹果。谁拿着红色的苹果？小", "answer": "丁", "kind": "who"})"
                                        << "\n"
                                        << R"({"prompt": "小丁拿着红色的苹果。谁拿着苹果？小", "answer": "丁", "kind": "who", "source": 1})"
                                        << "\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  test::CommandResult run(std::vector<std::string> args) { return run_mini_gpt(args, dir_); }
  std::string ckpt() const { return (test::source_dir() / "tests" / "fixtures" / "heads_ref.safetensors").string(); }
  std::string probe() const { return (dir_ / "probe.jsonl").string(); }
  std::filesystem::path dir_;
};

TEST_F(HeadCliTest, TracePrintsEveryStep) {
  auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--text", "小丁拿着红色的苹果。谁拿着苹果？", "--trace", "1.0",
                "--position", "12"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* step : {"1. x_t", "2. q_t", "after RoPE", "3. k_s", "7. softmax", "8. head output",
                           "9. the head's slice of Wo", "10. this is the head's contribution", "11. output symbols"})
    EXPECT_NE(r.out.find(step), std::string::npos) << step << "\n" << r.out;
  auto bad = run({"inspect-heads", "--checkpoint", ckpt(), "--text", "小丁", "--trace", "1.0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--trace needs --position"), std::string::npos) << bad.err;
  bad = run({"inspect-heads", "--checkpoint", ckpt(), "--text", "小丁", "--trace", "1", "--position", "1"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("LAYER.HEAD"), std::string::npos) << bad.err;
}

TEST_F(HeadCliTest, RolesTableJsonAndAblation) {
  auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--roles", "--probe", probe()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2 probe prompts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("drop"), std::string::npos) << r.out;
  auto j = run({"inspect-heads", "--checkpoint", ckpt(), "--roles", "--probe", probe(), "--format", "json",
                "--mean-ablation"});
  ASSERT_EQ(j.status, 0) << j.err;
  const json report = json::parse(j.out);
  EXPECT_EQ(report["ablation"], "mean");
  // The first prompt (19 symbols) is cropped to its last 16, which drops its source 丁.
  EXPECT_EQ(report["answer_items"], 1);
  ASSERT_EQ(report["heads"].size(), 4u);
  for (const auto& h : report["heads"]) EXPECT_TRUE(h["roles"]["accuracy_drop"].is_number());
  // Every --format json output carries the roles per head.
  auto full = run({"inspect-heads", "--checkpoint", ckpt(), "--text", "小丁拿着", "--format", "json", "--probe", probe()});
  ASSERT_EQ(full.status, 0) << full.err;
  const json inspection = json::parse(full.out);
  EXPECT_TRUE(inspection["layers"][0]["heads"][0]["roles"].contains("induction"));
  EXPECT_NE(inspection["roles_texts"].get<std::string>().find("probe prompts"), std::string::npos);
}

TEST_F(HeadCliTest, CircuitsWithSvg) {
  const std::string svg = (dir_ / "c.svg").string();
  auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--circuits", "--layer", "0", "--head", "1", "--top", "3",
                "--svg", svg});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("OV copy score"), std::string::npos) << r.out;
  EXPECT_EQ(test::read_text(svg).rfind("<svg", 0), 0u);
  auto bad = run({"inspect-heads", "--checkpoint", ckpt(), "--circuits", "--layer", "0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--circuits needs --layer L and --head H"), std::string::npos) << bad.err;
}

TEST_F(HeadCliTest, EvalAblate) {
  auto base = run({"eval", "--checkpoint", ckpt(), "--probe", probe(), "--json"});
  ASSERT_EQ(base.status, 0) << base.err;
  auto r = run({"eval", "--checkpoint", ckpt(), "--probe", probe(), "--json", "--ablate", "0.1", "--ablate", "1.0"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["ablated"], json::array({"0.1", "1.0"}));
  EXPECT_EQ(j["ablation"], "zero");
  auto bad = run({"eval", "--checkpoint", ckpt(), "--probe", probe(), "--ablate", "2.0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("valid 0.0..1.1"), std::string::npos) << bad.err;
  bad = run({"eval", "--checkpoint", ckpt(), "--text-file", probe(), "--ablate", "0.0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("give --probe FILE"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace mg
