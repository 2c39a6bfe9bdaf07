// The head explorer's C++ side (report/explorer.h, issue 16) on the committed inspect
// fixture (tests/fixtures/heads_ref.safetensors: 2 layers x 2 heads, block_size 16): the
// page's weights decode to exactly inspect_heads' floats, its traces are trace_head's,
// the traced positions follow the stated rule, the JSON cannot end its <script> early,
// metrics.jsonl is thinned and its torn lines skipped, and the command line refuses bad
// --html and --run values with one-line errors before doing any work. The page itself is
// tested in a real browser by tests/explorer_browser_test.py.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/utf8.h"
#include "inference/model_store.h"
#include "interp/patterns.h"
#include "interp/trace.h"
#include "report/explorer.h"
#include "report/trace_format.h"
#include "test_support.h"

namespace mg {
namespace {

using nlohmann::json;

const char* kText = "小丁拿着红色的苹果。谁拿着苹果？";  // 16 symbols, the fixture's block_size

std::vector<unsigned char> decode_base64(const std::string& b64) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> bytes;
  uint32_t buffer = 0;
  int bits = 0;
  for (char ch : b64) {
    if (ch == '=') break;
    buffer = (buffer << 6) | static_cast<uint32_t>(std::strchr(alphabet, ch) - alphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<unsigned char>((buffer >> bits) & 0xff));
    }
  }
  return bytes;
}

// The page's 24-bit weights back as doubles.
std::vector<double> decode_weights(const std::string& b64) {
  const std::vector<unsigned char> bytes = decode_base64(b64);
  std::vector<double> out(bytes.size() / 3);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<double>(uint32_t{bytes[3 * i]} | uint32_t{bytes[3 * i + 1]} << 8 | uint32_t{bytes[3 * i + 2]} << 16) /
             static_cast<double>(kWeightSteps);
  return out;
}

class HeadHtmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "probe.jsonl") << R"({"prompt": "小丁拿着红色的苹果。谁拿着红色的苹果？小", "answer": "丁", "kind": "who"})"
                                        << "\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string ckpt() const { return (test::source_dir() / "tests" / "fixtures" / "heads_ref.safetensors").string(); }
  test::CommandResult run(std::vector<std::string> args) { return test::run_mini_gpt(args, dir_); }
  std::filesystem::path dir_;
};

TEST_F(HeadHtmlTest, WeightsAreInspectHeadsFloatsAndTracesAreTraceHeads) {
  LoadedModel m = load_model(ckpt());
  const std::u32string text = decode_utf8(kText, "text");
  ExplorerOptions options;
  options.source = "fixture";
  const json data = json::parse(explorer_data(m.model, m.vocab, text, "text", options).dump());
  const Inspection inspection = inspect_heads(m.model, m.vocab, text, "text", {});
  const int64_t T = 16;
  ASSERT_EQ(data["heads"].size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    const std::vector<double> lower = decode_weights(data["heads"][k]["weights"]);
    ASSERT_EQ(static_cast<int64_t>(lower.size()), T * (T + 1) / 2);
    size_t i = 0;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s <= t; ++s)  // half a 24-bit step
        ASSERT_NEAR(lower[i++], inspection.heads[k].weight(t, s, T), 0.5 / kWeightSteps + 1e-12) << k << " " << t << " " << s;
  }
  // 2 x 2 x 16 <= the budget: every position traced, each equal to trace_head's own.
  EXPECT_EQ(data["traces"]["positions"].size(), 16u);
  EXPECT_TRUE(data["traces"]["all_positions"].get<bool>());
  const json at5 = data["traces"]["heads"][2]["at"]["5"];  // head 1.0
  const json direct = json::parse(trace_json(trace_head(m.model, m.vocab, text, "text", 1, 0, 5, 8), false).dump());
  EXPECT_EQ(at5, direct);
  const HeadTrace full = trace_head(m.model, m.vocab, text, "text", 1, 0, 15, 8);
  for (const auto& [name, rows] : {std::pair{"keys", &full.keys}, std::pair{"values", &full.values}}) {
    const std::vector<unsigned char> bytes = decode_base64(data["traces"]["heads"][2][name]);
    ASSERT_EQ(bytes.size(), 16u * 8u * 4u) << name;  // [T,d] float32, d = 8
    for (size_t s = 0; s < 16; ++s)
      for (size_t j = 0; j < 8; ++j) {
        float f;
        std::memcpy(&f, &bytes[4 * (s * 8 + j)], 4);  // (the test host is little-endian, as x86-64 is)
        ASSERT_EQ(f, static_cast<float>((*rows)[s][j])) << name << " " << s << " " << j;
      }
  }
  // No probe set: the page says so, and no head has an ablation cost.
  EXPECT_TRUE(data["roles"]["probe"].is_null());
  EXPECT_TRUE(data["roles"]["heads"][0]["roles"]["accuracy_drop"].is_null());
  EXPECT_EQ(data["circuits"]["V"], m.model.config().vocab_size);
  EXPECT_TRUE(data["run"].is_null());
}

TEST(HeadHtmlRules, WeightsKeep24Bits) {
  const std::vector<float> w = {0.0f, 1.0f, 0.5f, 1e-7f, 0.123456789f};
  const std::vector<double> back = decode_weights(weights_base64(w));
  ASSERT_EQ(back.size(), w.size());
  EXPECT_EQ(back[0], 0.0);
  EXPECT_EQ(back[1], 1.0);
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(back[i], w[i], 0.5 / kWeightSteps + 1e-12) << i;
  EXPECT_NE(back[3], 0.0);  // 1e-7 is about 1.7 steps: small weights do not vanish
}

TEST(HeadHtmlRules, TracedPositions) {
  EXPECT_EQ(traced_positions(4, 2, 36, std::nullopt).size(), 36u);
  EXPECT_EQ(traced_positions(4, 2, 128, 7).size(), 128u);  // 1024: still every position
  EXPECT_EQ(traced_positions(4, 2, 129, 7), (std::vector<int64_t>{7, 128}));
  EXPECT_EQ(traced_positions(8, 8, 256, std::nullopt), (std::vector<int64_t>{255}));
  EXPECT_EQ(traced_positions(8, 8, 256, 255), (std::vector<int64_t>{255}));
}

TEST(HeadHtmlRules, DataCannotEndItsScriptEarly) {
  nlohmann::ordered_json data = {{"text", "</script><script>alert(1)</script>"}};
  const std::string page = explorer_html(data);
  size_t count = 0;
  for (size_t at = page.find("</script>"); at != std::string::npos; at = page.find("</script>", at + 1)) ++count;
  EXPECT_EQ(count, 3u);  // the data's own, the shared drawing code's (report/page/draw.js) and the script's own
  EXPECT_NE(page.find(R"(\u003c/script>\u003cscript>alert(1)\u003c/script>)"), std::string::npos);
  EXPECT_EQ(page.find("@EXPLORER_DATA@"), std::string::npos);
  EXPECT_EQ(page.find("/*@EXPLORER_JS@*/"), std::string::npos);
  EXPECT_EQ(page.find("/*@EXPLORER_CSS@*/"), std::string::npos);
  EXPECT_EQ(page.find("/*@PAGE_JS@*/"), std::string::npos);
  EXPECT_EQ(page.find("/*@PAGE_CSS@*/"), std::string::npos);
  EXPECT_NE(page.find("const mgDraw"), std::string::npos);
  EXPECT_NE(page.find("document.body.dataset.ready"), std::string::npos);
}

TEST_F(HeadHtmlTest, RunCurvesThinTheLossAndSkipTornLines) {
  {
    std::ofstream out(dir_ / "metrics.jsonl");
    for (int step = 1; step <= 3000; ++step) {
      json line = {{"step", step}, {"loss", step % 3 == 0 ? 3.0 : 0.0}};
      if (step % 1000 == 0) {
        line["val_loss"] = 1.5;
        line["probe_accuracy"] = 0.25;
        line["probe_accuracy_by_kind"] = {{"who", 0.5}};
        line["head_roles"] = json::array({{{"layer", 0}, {"head", 1}, {"induction", 0.75}}});
      }
      out << line.dump() << "\n";
    }
    out << "{\"step\": 3001, \"lo";  // a line being appended
  }
  const json curves = json::parse(run_curves(dir_).dump());
  EXPECT_EQ(curves["lines"], 3001);
  EXPECT_EQ(curves["skipped"], 1);
  EXPECT_EQ(curves["loss_bucket"], 3);
  ASSERT_EQ(curves["train"]["loss"].size(), 1000u);
  EXPECT_DOUBLE_EQ(curves["train"]["loss"][0].get<double>(), 1.0);  // the mean of 0, 0, 3
  EXPECT_EQ(curves["train"]["step"][0], 3.0);
  ASSERT_EQ(curves["evals"].size(), 3u);
  EXPECT_EQ(curves["evals"][2]["step"], 3000.0);
  EXPECT_EQ(curves["evals"][2]["by_kind"]["who"], 0.5);
  EXPECT_EQ(curves["evals"][2]["head_roles"][0]["induction"], 0.75);
  std::filesystem::create_directory(dir_ / "empty");
  EXPECT_THROW(run_curves(dir_ / "empty"), InputError);
}

TEST_F(HeadHtmlTest, RunCurvesEmbedOnlyFiniteNumbersInShapeAndThinTheEvaluations) {
  {
    std::ofstream out(dir_ / "metrics.jsonl");
    out << "{\"step\": 0, \"loss\": 1, \"head_roles\": " << std::string(100000, '[') << std::string(100000, ']') << "}\n";
    out << "{\"step\": \"7\", \"loss\": 1}\n[1, 2]\n";  // no finite step; not an object
    for (int step = 1; step <= 2500; ++step) {
      json line = {{"step", step}, {"loss", step == 5 ? json("abc") : json(1e308)}, {"val_loss", 2.0}};
      line["probe_accuracy"] = step == 2500 ? json(nullptr) : json(0.5);
      line["probe_accuracy_by_kind"] = {{"who", "abc"}, {"what", 1e308}, {"colour", -1e308}, {"x", 0.25}};
      line["head_roles"] = json::array({nullptr, {{"layer", "</script>"}, {"head", 0}}, {{"layer", -1}, {"head", 0}},
                                        {{"layer", 0}, {"head", 1}, {"induction", 0.5}, {"role", "mixed"},
                                         {"answer_finding_by_kind", {{"who", "s"}, {"what", 0.25}}}}});
      out << line.dump() << "\n";
    }
  }
  const json curves = json::parse(run_curves(dir_).dump());
  EXPECT_EQ(curves["lines"], 2503);
  EXPECT_EQ(curves["skipped"], 3);  // the deep line, the string step, the array
  EXPECT_EQ(curves["evals_total"], 2500);
  EXPECT_EQ(curves["eval_stride"], 3);
  ASSERT_EQ(curves["evals"].size(), 834u);  // steps 1, 4, ..., 2500: every 3rd (the last among them)
  EXPECT_EQ(curves["evals"][1]["step"], 4.0);
  const json& last = curves["evals"].back();
  EXPECT_EQ(last["step"], 2500.0);
  EXPECT_FALSE(last.contains("probe_accuracy"));
  EXPECT_EQ(last["by_kind"], json({{"what", 1e308}, {"colour", -1e308}, {"x", 0.25}}));
  EXPECT_EQ(last["head_roles"], json::parse(R"([{"layer":0,"head":1,"induction":0.5,"answer_finding_by_kind":{"what":0.25}}])"));
  EXPECT_EQ(curves["train"]["loss"].size(), 833u);  // 2,499 finite losses in buckets of 3
  EXPECT_DOUBLE_EQ(curves["train"]["loss"][0].get<double>(), 1e308);  // a mean that does not overflow
}

TEST_F(HeadHtmlTest, CommandWritesThePageAndRefusesBadTargets) {
  auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--text", kText, "--html", (dir_ / "page.html").string(),
                "--probe", (dir_ / "probe.jsonl").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("head explorer written to"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("traces at every position"), std::string::npos) << r.out;
  const std::string page = test::read_text(dir_ / "page.html");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // no other address: nothing loaded
  EXPECT_EQ(page.find("https://"), std::string::npos);

  auto expect_refused = [&](std::vector<std::string> args, int status, const std::string& needle) {
    auto bad = run(args);
    EXPECT_EQ(bad.status, status) << bad.err;
    EXPECT_EQ(bad.err.rfind("mini-gpt: error: ", 0), 0u) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    EXPECT_NE(bad.err.find(needle), std::string::npos) << "missing \"" << needle << "\" in " << bad.err;
    EXPECT_TRUE(bad.out.empty()) << bad.out;
  };
  const std::vector<std::string> base = {"inspect-heads", "--checkpoint", ckpt(), "--text", kText};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  expect_refused(with({"--html", dir_.string()}), 2, "directory");
  expect_refused(with({"--html", (dir_ / "no" / "page.html").string()}), 2, "does not exist");
  expect_refused(with({"--html", "/dev/null"}), 2, "/dev/null");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--trace", "0.0", "--position", "1"}), 2, "--trace is not used by --html");
  expect_refused(with({"--run", dir_.string()}), 2, "--run goes with --html");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--run", (dir_ / "nothing").string()}), 2, "not a run directory");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--run", dir_.string()}), 2, "holds no metrics.jsonl");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--position", "16"}), 2, "--position 16 is out of range");
  // --replay (issue 57's step slider): a run with kept evaluation models, and nothing else.
  const std::filesystem::path no_evals = dir_ / "no_evals";
  std::filesystem::create_directories(no_evals / "evals");  // the folder, but no model in it
  std::ofstream(no_evals / "metrics.jsonl") << "{\"step\":0,\"loss\":4.0}\n";
  expect_refused(with({"--replay"}), 2, "--replay is not used by the default view (--replay goes with --html)");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--replay"}), 2, "--replay needs --run DIR");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--run", (dir_ / "nothing").string(), "--replay"}), 2,
                 "--run " + (dir_ / "nothing").string() + " is not a run directory");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--run", no_evals.string(), "--replay"}), 2,
                 "--replay: " + no_evals.string() + " holds no kept evaluation models");
  std::filesystem::remove(no_evals / "evals");
  expect_refused(with({"--html", (dir_ / "p.html").string(), "--run", no_evals.string(), "--replay"}), 2,
                 "holds no kept evaluation models (" + (no_evals / "evals").string() + "/step_NNNNNNN.safetensors");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "p.html"));
}

// train writes heads.html after its last checkpoint; when it cannot (here a folder is in
// the way), the run is kept: exit 0, one warning line, the checkpoints in place.
TEST_F(HeadHtmlTest, TrainWritesHeadsHtmlOrWarns) {
  const std::string config = (test::source_dir() / "configs" / "tiny.json").string();
  auto ok = run({"train", "--config", config, "--out", (dir_ / "run").string(), "--max-steps", "3", "--threads", "1"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("head explorer " + (dir_ / "run" / "heads.html").string()), std::string::npos) << ok.out;
  const std::string page = test::read_text(dir_ / "run" / "heads.html");
  EXPECT_NE(page.find("\"format\":\"mini-gpt head explorer 1\""), std::string::npos);
  EXPECT_NE(page.find("\"run\":{\"dir\":"), std::string::npos);  // the run's curves are in it

  std::filesystem::create_directories(dir_ / "blocked" / "heads.html");
  auto warned = run({"train", "--config", config, "--out", (dir_ / "blocked").string(), "--max-steps", "3", "--threads", "1"});
  ASSERT_EQ(warned.status, 0) << warned.err;
  EXPECT_NE(warned.err.find("mini-gpt: warning: " + (dir_ / "blocked" / "heads.html").string() + " not written: "),
            std::string::npos) << warned.err;
  EXPECT_NE(warned.err.find("is a directory"), std::string::npos) << warned.err;
  EXPECT_EQ(warned.err.find("mini-gpt: error"), std::string::npos) << warned.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir_ / "blocked" / "latest.safetensors"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir_ / "blocked" / "best.safetensors"));
  EXPECT_EQ(warned.out.find("head explorer"), std::string::npos) << warned.out;
}

TEST_F(HeadHtmlTest, TraceJsonHoldsTheFormattedNumbers) {
  auto r = run({"inspect-heads", "--checkpoint", ckpt(), "--text", kText, "--trace", "1.1", "--position", "9",
                "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json trace = json::parse(r.out);
  EXPECT_EQ(trace["layer"], 1);
  EXPECT_EQ(trace["position"], 9);
  ASSERT_EQ(trace["dots"].size(), 10u);
  ASSERT_EQ(trace["keys"].size(), 10u);
  ASSERT_EQ(trace["weights"].size(), 16u);
  double sum = 0.0;
  for (size_t s = 0; s < 16; ++s) {
    sum += trace["weights"][s].get<double>();
    EXPECT_NEAR(trace["weights"][s].get<double>(), trace["forward_weights"][s].get<double>(), 1e-5) << s;
    if (s < 10)
      EXPECT_NEAR(trace["scores"][s].get<double>(), trace["dots"][s].get<double>() * trace["scale"].get<double>(), 1e-6);
    else
      EXPECT_EQ(trace["weights"][s], 0.0);
  }
  EXPECT_NEAR(sum, 1.0, 1e-6);
  // The same numbers as the printout's, which rounds them to 6 decimals.
  auto text = run({"inspect-heads", "--checkpoint", ckpt(), "--text", kText, "--trace", "1.1", "--position", "9"});
  char dot[32];
  std::snprintf(dot, sizeof dot, "%10.6f", trace["dots"][3].get<double>());
  EXPECT_NE(text.out.find(dot), std::string::npos) << dot << "\n" << text.out;
}

}  // namespace
}  // namespace mg
