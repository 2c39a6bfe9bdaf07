// Issue 56 on the command line: one name for a head (L3.H1) in every text and JSON string,
// taken by --trace and --ablate beside the short 3.1; --roles and --explain in one vocabulary
// (writer, carrier); the explorer's data naming its positions ("rope", not 0); and --patch's
// warning when the clean and corrupt differences are too close to measure a share: from the
// writers on a Patching built here (the issue's 6.72 against 6.32), and end to end on the
// committed fixture (tests/fixtures/heads_ref.safetensors: 2 layers x 2 heads), where every
// corruption of one symbol is patched and the warning must appear exactly when |gap| < 1.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "interp/patching.h"
#include "report/circuit_format.h"
#include "report/text.h"
#include "test_support.h"

namespace mg {
namespace {

using nlohmann::json;
using test::run_mini_gpt;

class HeadNamesTest : public ::testing::Test {
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

TEST(HeadName, IsLayerDotHeadWithLetters) {
  EXPECT_EQ(head_name(3, 1), "L3.H1");
  EXPECT_EQ(head_name(0, 0), "L0.H0");
  EXPECT_EQ(head_name(11, 15), "L11.H15");
}

TEST_F(HeadNamesTest, TraceAndAblateTakeBothSpellings) {
  const std::string text = "丁拿着红色的苹果。谁拿着苹果？小";  // 16 symbols, the block
  auto a = run({"inspect-heads", "--checkpoint", ckpt(), "--text", text, "--trace", "L1.H0", "--position", "5"});
  auto b = run({"inspect-heads", "--checkpoint", ckpt(), "--text", text, "--trace", "1.0", "--position", "5"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("trace of L1.H0 (layer 1, head 0) at query position 5"), std::string::npos) << a.out;
  auto x = run({"eval", "--checkpoint", ckpt(), "--probe", probe(), "--json", "--ablate", "L0.H1"});
  auto y = run({"eval", "--checkpoint", ckpt(), "--probe", probe(), "--json", "--ablate", "0.1"});
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(x.out, y.out);
  for (const char* bad : {"L1.0", "1.H0", "L.H", "H1.L0", "l1.h0"}) {
    auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--text", text, "--trace", bad, "--position", "5"});
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_NE(r.err.find("is not a head: L3.H1 or 3.1"), std::string::npos) << r.err;
  }
}

TEST_F(HeadNamesTest, EveryTextNamesAHeadLnHm) {
  const std::string text = "丁拿着红色的苹果。谁拿着苹果？小";  // 16 symbols, the block
  auto view = run({"inspect-heads", "--checkpoint", ckpt(), "--text", text});
  ASSERT_EQ(view.status, 0) << view.err;
  EXPECT_NE(view.out.find("L1.H1 (layer 1, head 1): projected_weights"), std::string::npos) << view.out;
  auto roles = run({"inspect-heads", "--checkpoint", ckpt(), "--roles", "--probe", probe()});
  ASSERT_EQ(roles.status, 0) << roles.err;
  for (const char* name : {"\nL0.H0 ", "\nL0.H1 ", "\nL1.H0 ", "\nL1.H1 "}) EXPECT_NE(roles.out.find(name), std::string::npos) << roles.out;
  // The roles speak --explain's words, never the old ones.
  EXPECT_NE(roles.out.find("names it writer"), std::string::npos) << roles.out;
  EXPECT_EQ(roles.out.find("copy-forward("), std::string::npos) << roles.out;
  EXPECT_EQ(roles.out.find("answer-finding("), std::string::npos) << roles.out;
  auto roles_json = run({"inspect-heads", "--checkpoint", ckpt(), "--roles", "--probe", probe(), "--format", "json"});
  ASSERT_EQ(roles_json.status, 0) << roles_json.err;
  const std::regex vocabulary(R"(^(writer|carrier|induction|previous-token|offset-\d+|current-token|first-position)(\([a-z_,]+\))?$)");
  for (const auto& h : json::parse(roles_json.out)["heads"]) {
    const std::string role = h["roles"]["role"];
    if (role == "mixed") continue;
    std::string rest = role;
    for (size_t plus; !rest.empty(); rest = plus == std::string::npos ? "" : rest.substr(plus + 1)) {
      plus = rest.find('+');
      const std::string part = rest.substr(0, plus);
      EXPECT_TRUE(std::regex_match(part, vocabulary)) << role;
    }
  }
  auto explain = run({"inspect-heads", "--checkpoint", ckpt(), "--probe", probe(), "--explain", "--format", "json"});
  ASSERT_EQ(explain.status, 0) << explain.err;
  const std::regex name(R"(^L\d+\.H\d+$)");
  for (const auto& k : json::parse(explain.out)["kinds"]) {
    if (!k["writer"].is_null()) EXPECT_TRUE(std::regex_match(k["writer"].get<std::string>(), name)) << k;
    if (!k["carrier"].is_null()) EXPECT_TRUE(std::regex_match(k["carrier"].get<std::string>(), name)) << k;
  }
}

TEST_F(HeadNamesTest, TheExplorerNamesItsPositions) {
  const std::string page = (dir_ / "page.html").string();
  auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--text", "小丁拿着红色的苹果。", "--html", page});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string html = test::read_text(page);
  const std::string marker = R"(<script type="application/json" id="explorer-data">)";
  const size_t start = html.find(marker) + marker.size();
  const json data = json::parse(html.substr(start, html.find("</script>", start) - start));
  const std::string position = data["model"]["position"];
  EXPECT_TRUE(position == "rope" || position == "learned") << data["model"];
  // Both pages' words are in the page, in both languages (src/report/page/words.js).
  EXPECT_NE(html.find("const mgWords"), std::string::npos);
  EXPECT_NE(html.find("注意力头浏览器"), std::string::npos);
}

// The writers on the issue's numbers: a gap of 0.40 is warned of in the text, the JSON and
// the line cli prints; a gap of exactly 1 (kMinPatchingGap) and one of -8 are not.
TEST(PatchingGap, TheWritersWarnBelowOneNat) {
  Patching p;
  p.clean_tokens = p.corrupt_tokens = {"小", "马"};
  p.n_layer = 1;
  p.n_head = 1;
  p.T = 2;
  p.answer_symbol = "马";
  p.against_symbol = "林";
  p.heads = {1.8999};
  p.head_positions = {0.0, 1.8999};
  p.streams = {0.0, 1.0};
  p.whole_streams = {1.0};
  p.clean = 6.72;
  p.corrupt = 6.32;
  ASSERT_TRUE(patching_gap_too_small(p));
  const std::string text = format_patching(p, 5);
  EXPECT_NE(text.find("warning: the clean and corrupt differences (6.7200, 6.3200) are 0.4000 apart, under 1.0: too close "
                      "to measure a share restored"),
            std::string::npos)
      << text;
  const auto j = patching_json(p);
  EXPECT_NEAR(j["gap"].get<double>(), 0.4, 1e-9);
  EXPECT_EQ(j["min_gap"].get<double>(), 1.0);
  EXPECT_EQ(j["warning"].get<std::string>(), patching_gap_warning(p));
  for (const auto& [clean, corrupt] : {std::pair{7.0, 6.0}, std::pair{8.0, -8.0}, std::pair{-3.0, -1.0}}) {
    p.clean = clean;
    p.corrupt = corrupt;
    EXPECT_FALSE(patching_gap_too_small(p)) << clean << " " << corrupt;
    EXPECT_EQ(format_patching(p, 5).find("warning:"), std::string::npos);
    EXPECT_TRUE(patching_json(p)["warning"].is_null());
  }
  p.clean = 1.0;
  p.corrupt = 1.0 - std::nextafter(1.0, 0.0);  // a gap a hair under 1
  EXPECT_TRUE(patching_gap_too_small(p));
}

// End to end: each one-symbol corruption of a 16-symbol text; the warning (text, JSON,
// stderr with --format json) appears exactly when |clean - corrupt| < 1.
TEST_F(HeadNamesTest, PatchWarnsExactlyWhenTheGapIsUnderOne) {
  const std::u32string clean = U"丁拿着红色的苹果。谁拿着苹果？小";
  auto utf8 = [](const std::u32string& s) {
    std::string out;
    for (char32_t c : s) {
      if (c < 0x80) out += static_cast<char>(c);
      else {  // every symbol here is 3 bytes
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
      }
    }
    return out;
  };
  int warned = 0, measured = 0;
  for (size_t t = 0; t + 1 < clean.size(); ++t) {
    std::u32string corrupt = clean;
    corrupt[t] = corrupt[t] == U'红' ? U'苹' : U'红';
    auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--patch", "--clean", utf8(clean), "--corrupt", utf8(corrupt),
                  "--answer", "丁", "--against", "红", "--format", "json"});
    if (r.status == 2 && r.err.find("nothing for patching to restore") != std::string::npos) continue;  // no change: refused
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = json::parse(r.out);
    const double gap = j["clean"].get<double>() - j["corrupt"].get<double>();
    const bool small = std::abs(gap) < 1.0;
    EXPECT_EQ(!j["warning"].is_null(), small) << "position " << t << ", gap " << gap;
    EXPECT_EQ(r.err.find("mini-gpt: warning: the clean and corrupt differences") != std::string::npos, small) << r.err;
    auto table = run({"inspect-heads", "--checkpoint", ckpt(), "--patch", "--clean", utf8(clean), "--corrupt",
                      utf8(corrupt), "--answer", "丁", "--against", "红"});
    ASSERT_EQ(table.status, 0) << table.err;
    EXPECT_EQ(table.out.find("\nwarning: ") != std::string::npos, small) << table.out;
    EXPECT_TRUE(table.err.empty()) << table.err;  // the table says it once, on stdout
    (small ? warned : measured)++;
  }
  std::printf("one-symbol corruptions: %d warned (gap under 1), %d measured\n", warned, measured);
  EXPECT_GT(warned + measured, 10);
}

}  // namespace
}  // namespace mg
