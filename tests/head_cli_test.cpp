// The issue-15 command lines end to end on the committed inspect fixture
// (tests/fixtures/heads_ref.safetensors: 2 layers x 2 heads, block_size 16): --trace,
// --roles (table, JSON, mean-ablation), --circuits with --svg, the "roles" object of
// --format json, eval --ablate, and their one-line errors. Issue 56: one name for a head
// (L3.H1) in every text and JSON string, taken by --trace and --ablate beside 3.1; --roles in
// --explain's words (writer, carrier); the explorer's data naming its positions; and
// --patch's gap warning on every one-symbol corruption of a text, present (text, JSON,
// stderr) exactly when |clean - corrupt| < 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

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
  EXPECT_NE(bad.err.find("is not a head: L3.H1 or 3.1"), std::string::npos) << bad.err;
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
  for (const auto& h : report["heads"]) {
    EXPECT_TRUE(h["roles"]["accuracy_drop"].is_number());
    EXPECT_TRUE(h["roles"]["direct_logit"].is_number());
  }
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
  EXPECT_EQ(j["ablated"], json::array({"L0.H1", "L1.H0"}));  // the heads' one name
  EXPECT_EQ(j["ablation"], "zero");
  auto bad = run({"eval", "--checkpoint", ckpt(), "--probe", probe(), "--ablate", "2.0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("valid L0.H0..L1.H1"), std::string::npos) << bad.err;
  bad = run({"eval", "--checkpoint", ckpt(), "--text-file", probe(), "--ablate", "0.0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("give --probe FILE"), std::string::npos) << bad.err;
}

// Issue 30's circuit modes end to end: each prints its numbers (the JSON's parts sum to
// the difference, the lens has a stage per block and one for the embedding, composition one
// pair per earlier and later head, patching the whole stream restores 1), and each refuses
// options it does not use and bad input with one line, exit 2.
TEST_F(HeadCliTest, CircuitModes) {
  const std::string text = "丁拿着红色的苹果。谁拿着苹果？小";  // 16 symbols, the block
  auto a = run({"inspect-heads", "--checkpoint", ckpt(), "--attribution", "--text", text, "--format", "json"});
  ASSERT_EQ(a.status, 0) << a.err;
  const json attribution = json::parse(a.out);
  double sum = 0.0;
  for (const auto& part : attribution["parts"]) sum += part["difference"].get<double>();
  EXPECT_NEAR(sum, attribution["difference"].get<double>(), 1e-4);
  EXPECT_EQ(attribution["parts"].size(), 8u);  // embed, 2 x (2 heads, mlp), ln_f.bias
  auto table = run({"inspect-heads", "--checkpoint", ckpt(), "--attribution", "--text", text, "--answer", "丁"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("answer \"丁\""), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("frozen"), std::string::npos) << table.out;
  auto lens = run({"inspect-heads", "--checkpoint", ckpt(), "--logit-lens", "--text", text, "--format", "json"});
  ASSERT_EQ(lens.status, 0) << lens.err;
  EXPECT_EQ(json::parse(lens.out)["stages"].size(), 3u);
  auto composition = run({"inspect-heads", "--checkpoint", ckpt(), "--composition", "--format", "json"});
  ASSERT_EQ(composition.status, 0) << composition.err;
  EXPECT_EQ(json::parse(composition.out)["pairs"].size(), 4u);
  const std::string svg = (dir_ / "patch.svg").string();
  auto patch = run({"inspect-heads", "--checkpoint", ckpt(), "--patch", "--clean", text, "--corrupt",
                    "丁拿着红色的果苹。谁拿着苹果？小", "--svg", svg, "--format", "json"});
  ASSERT_EQ(patch.status, 0) << patch.err;
  const json patched = json::parse(patch.out);
  EXPECT_EQ(patched["whole_streams"][1].get<double>(), 1.0);
  EXPECT_EQ(patched["streams"][0].size(), text.size() / 3);  // one per symbol (3 UTF-8 bytes each)
  EXPECT_NE(test::read_text(svg).find("<svg"), std::string::npos);
  auto probe_patch = run({"inspect-heads", "--checkpoint", ckpt(), "--patch", "--probe", probe()});
  ASSERT_EQ(probe_patch.status, 0) << probe_patch.err;
  EXPECT_NE(probe_patch.out.find("--swap value"), std::string::npos) << probe_patch.out;
  auto key_patch = run({"inspect-heads", "--checkpoint", ckpt(), "--patch", "--probe", probe(), "--swap", "key",
                        "--format", "json"});
  ASSERT_EQ(key_patch.status, 0) << key_patch.err;
  EXPECT_EQ(json::parse(key_patch.out)["swap"].get<std::string>(), "key");

  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--attribution", "--text", text, "--layer", "0"}, "--layer is not used by --attribution"},
      {{"--composition", "--text", text}, "--text is not used by --composition"},
      {{"--logit-lens", "--text", text, "--svg", svg}, "--svg is not used by --logit-lens"},
      {{"--attribution", "--patch", "--text", text}, "give one mode"},
      {{"--answer", "丁", "--text", text}, "--answer goes with"},
      {{"--attribution", "--text", text, "--answer", "丁丁"}, "give exactly one"},
      {{"--attribution", "--text", text, "--answer", "Z"}, "not in the model's vocabulary"},
      {{"--attribution", "--text", text, "--position", "16"}, "--position 16 is out of range"},
      {{"--logit-lens", "--text", "小Z"}, "not in the vocabulary"},
      {{"--patch", "--clean", text, "--corrupt", "小丁"}, "equal length"},
      {{"--patch", "--clean", text}, "--patch needs --clean TEXT and --corrupt TEXT"},
      {{"--patch", "--probe", probe(), "--answer", "丁"}, "--answer is not used by --patch --probe"},
      {{"--patch", "--clean", text, "--corrupt", text, "--swap", "key"}, "--swap builds each probe item's corruption"},
      {{"--patch", "--probe", probe(), "--swap", "name"}, "--swap"},
      {{"--attribution", "--text", text + text}, "block_size"},
  };
  for (const auto& [args, message] : refused) {
    std::vector<std::string> full = {"inspect-heads", "--checkpoint", ckpt()};
    full.insert(full.end(), args.begin(), args.end());
    auto r = run(full);
    EXPECT_EQ(r.status, 2) << message << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
  }
}


TEST_F(HeadCliTest, Issue56TraceAndAblateTakeBothSpellings) {
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

TEST_F(HeadCliTest, Issue56EveryTextNamesAHeadLnHm) {
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
  const json roles_doc = json::parse(roles_json.out);  // the loop below must not outlive the parsed document
  for (const auto& h : roles_doc["heads"]) {
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
  const json explain_doc = json::parse(explain.out);
  for (const auto& k : explain_doc["kinds"]) {
    if (!k["writer"].is_null()) EXPECT_TRUE(std::regex_match(k["writer"].get<std::string>(), name)) << k;
    if (!k["carrier"].is_null()) EXPECT_TRUE(std::regex_match(k["carrier"].get<std::string>(), name)) << k;
  }
}

TEST_F(HeadCliTest, Issue56TheExplorerNamesItsPositions) {
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

// End to end: each one-symbol corruption of a 16-symbol text; the warning (text, JSON,
// stderr with --format json) appears exactly when |clean - corrupt| < 1.
TEST_F(HeadCliTest, Issue56PatchWarnsExactlyWhenTheGapIsUnderOne) {
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

// Issue 32: the rules of inspect-heads, read from its --help (the table every mode is
// checked against) and quoted verbatim by docs/cli.md. Every pair of a mode and an option
// outside its row (a second mode included) exits 2 with one line naming both.
// One head against two: --compare pairs the one head with one of the two and lists the other
// with its nearest (it refused models of different head counts before issue 50).
TEST_F(HeadCliTest, CompareAcrossHeadCounts) {
  const std::string config = (test::source_dir() / "configs" / "tiny.json").string();
  for (const char* heads : {"1", "2"}) {
    auto t = run({"train", "--config", config, "--out", (dir_ / ("h" + std::string(heads))).string(), "--max-steps", "20",
                  "--threads", "1", "--set", std::string("model.n_head=") + heads});
    ASSERT_EQ(t.status, 0) << t.err;
  }
  const std::string one = (dir_ / "h1" / "best.safetensors").string(), two = (dir_ / "h2" / "best.safetensors").string();
  auto r = run({"inspect-heads", "--compare", one, two, "--probe", probe()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("A has 1 layer x 1 head, B 1 layer x 2 heads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nearest A L0.H0"), std::string::npos) << r.out;
  auto j = run({"inspect-heads", "--compare", two, one, "--probe", probe(), "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const json out = json::parse(j.out);
  ASSERT_EQ(out["pairs"].size(), 1u);
  EXPECT_EQ(out["pairs"][0]["b"], json({0, 0}));
  ASSERT_EQ(out["unmatched"].size(), 1u);
  EXPECT_EQ(out["unmatched"][0]["model"], "a");
  EXPECT_EQ(out["unmatched"][0]["nearest"], json({0, 0}));
  EXPECT_EQ(out["heads_a"], json({1, 2}));
  EXPECT_EQ(out["heads_b"], json({1, 1}));
  // The two heads of A are the pair's and the unmatched one, each once.
  EXPECT_NE(out["pairs"][0]["a"], out["unmatched"][0]["head"]);
  // Equal head counts print what they always printed: no unmatched heads.
  auto same = run({"inspect-heads", "--compare", two, two, "--probe", probe(), "--format", "json"});
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_FALSE(json::parse(same.out).contains("unmatched"));
}

TEST_F(HeadCliTest, EveryOptionOutsideItsModeIsRefused) {
  auto help = run({"inspect-heads", "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  const std::string marker = "Modes and the options each reads";
  const size_t table_at = help.out.find(marker);
  ASSERT_NE(table_at, std::string::npos) << help.out;
  auto option_names = [](const std::string& line) {
    std::vector<std::string> names;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      for (std::string part; !w.empty();) {  // "-h,--help" holds two names
        const size_t comma = w.find(',');
        part = w.substr(0, comma);
        w = comma == std::string::npos ? "" : w.substr(comma + 1);
        if (part.rfind("--", 0) == 0) names.push_back(part);
      }
    }
    return names;
  };
  // Every option of the command: the first name on each line of the options section.
  std::vector<std::string> universe;
  {
    std::istringstream lines(help.out.substr(0, table_at));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("  -", 0) != 0) continue;
      const auto names = option_names(line.substr(0, line.find_first_of(' ', 2 + line.find_first_not_of(' '))));
      if (!names.empty() && names[0] != "--help") universe.push_back(names[0]);
    }
  }
  ASSERT_GE(universe.size(), 25u);
  // The rows: a mode flag ("" for the default view) and the options it reads.
  struct Row { std::string flag; std::vector<std::string> reads; };
  std::vector<Row> rows;
  std::vector<std::string> table_lines;
  {
    std::istringstream lines(help.out.substr(table_at));
    std::string line;
    std::getline(lines, line);
    table_lines.push_back(line);
    while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
      table_lines.push_back(line);
      std::vector<std::string> names = option_names(line);
      Row row;
      if (line.find("(default view)") == std::string::npos) {
        row.flag = names.front();
        names.erase(names.begin());
      }
      row.reads = names;
      rows.push_back(row);
    }
    table_lines.push_back(line);  // the line on the options every mode reads
  }
  ASSERT_EQ(rows.size(), 15u);
  const std::string docs = test::read_text(test::source_dir() / "docs" / "cli.md");
  for (const std::string& line : table_lines) EXPECT_NE(docs.find(line + "\n"), std::string::npos) << "docs/cli.md lacks: " << line;

  const std::string svg = (dir_ / "x.svg").string();
  const std::map<std::string, std::vector<std::string>> sample = {
      {"--checkpoint", {ckpt()}}, {"--config", {"x.json"}}, {"--seed", {"1"}}, {"--text", {"小丁"}},
      {"--layer", {"0"}}, {"--head", {"0"}}, {"--format", {"json"}}, {"--position", {"0"}}, {"--weights", {}},
      {"--svg", {svg}}, {"--trace", {"0.0"}}, {"--roles", {}}, {"--probe", {probe()}}, {"--text-file", {probe()}},
      {"--mean-ablation", {}}, {"--replay", {}}, {"--circuits", {}}, {"--compare", {ckpt(), ckpt()}},
      {"--html", {(dir_ / "p.html").string()}}, {"--run", {dir_.string()}}, {"--top", {"3"}},
      {"--attribution", {}}, {"--logit-lens", {}}, {"--composition", {}}, {"--patch", {}}, {"--answer", {"丁"}},
      {"--against", {"小"}}, {"--clean", {"小丁"}}, {"--corrupt", {"丁小"}}, {"--swap", {"key"}}, {"--explain", {}}, {"--timeline", {}},
      {"--next-symbol", {}}, {"--temperature", {"0.5"}}, {"--top-k", {"3"}}, {"--top-p", {"0.9"}}, {"--ablate", {"0.1"}},
      {"--circuit", {}}, {"--threshold", {"0.05"}}, {"--score-split", {"0.0"}}, {"--threads", {"1"}},
      {"--backend", {"reference"}}};
  std::vector<std::string> mode_flags;
  for (const Row& row : rows)
    if (!row.flag.empty()) mode_flags.push_back(row.flag);
  auto has = [](const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  auto with_value = [&](const std::string& option) {
    EXPECT_TRUE(sample.count(option)) << "the test has no sample value for " << option;
    std::vector<std::string> args = {option};
    if (sample.count(option)) args.insert(args.end(), sample.at(option).begin(), sample.at(option).end());
    return args;
  };
  int pairs = 0;
  for (const Row& row : rows) {
    const bool reads_source = row.flag != "--compare" && row.flag != "--timeline";
    const std::string mode_name = row.flag.empty() ? "the default view" : row.flag;
    for (const std::string& option : universe) {
      if (option == row.flag || has(row.reads, option) || option == "--threads" || option == "--backend") continue;
      if (reads_source && (option == "--checkpoint" || option == "--config" || option == "--seed")) continue;
      if (row.flag.empty() && has(mode_flags, option)) continue;  // it chooses that mode instead
      std::vector<std::string> args = {"inspect-heads"};
      if (reads_source && option != "--config") args.insert(args.end(), {"--checkpoint", ckpt()});
      if (!row.flag.empty()) {
        const auto mode = with_value(row.flag);
        args.insert(args.end(), mode.begin(), mode.end());
      }
      const auto extra = with_value(option);
      args.insert(args.end(), extra.begin(), extra.end());
      auto r = run(args);
      ++pairs;
      EXPECT_EQ(r.status, 2) << mode_name << " with " << option << ": " << r.err;
      EXPECT_EQ(r.err.rfind("mini-gpt: error: ", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find(option), std::string::npos) << mode_name << " with " << option << ": " << r.err;
      EXPECT_NE(r.err.find(mode_name), std::string::npos) << mode_name << " with " << option << ": " << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
  std::printf("inspect-heads: %d (mode, option) pairs outside the table, each refused\n", pairs);
  EXPECT_GE(pairs, 150);
}

}  // namespace
}  // namespace mg
