// inspect-heads --explain against the modes it reads, on a model that learned colour and
// what but not who (tests/fixtures/failed_who.safetensors: an issue-40 screen stopped at
// step 6,750, who 0.447 on the shipped probe): every number --explain prints is the number
// `eval --probe`, `--attribution --probe`, `--patch --probe --swap value|key` and
// `--composition` print for the same model, and its choice of writer and carrier is
// re-derived here from those outputs by the rules of interp/explain.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kFixture = (test::source_dir() / "tests" / "fixtures" / "failed_who.safetensors").string();
const std::string kProbe = (test::source_dir() / "data" / "probe.jsonl").string();

json run_json(const std::vector<std::string>& args, const fs::path& scratch) {
  std::vector<std::string> all = args;
  all.insert(all.end(), {"--threads", "1"});
  const test::CommandResult r = test::run_mini_gpt(all, scratch);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

const json& kind_of(const json& kinds, const std::string& kind) {
  for (const json& k : kinds)
    if (k["kind"] == kind) return k;
  ADD_FAILURE() << "no kind " << kind;
  return kinds.at(0);
}

std::string head_name(int64_t layer, int64_t head) { return "L" + std::to_string(layer) + ".H" + std::to_string(head); }

TEST(Explain, EveryNumberIsTheModesOwnAndTheChoiceFollowsTheRules) {
  const fs::path scratch = test::fresh_dir("explain");
  const json e = run_json({"inspect-heads", "--checkpoint", kFixture, "--probe", kProbe, "--explain", "--format", "json"}, scratch);
  const json eval = run_json({"eval", "--checkpoint", kFixture, "--probe", kProbe, "--json"}, scratch);
  const json attribution =
      run_json({"inspect-heads", "--checkpoint", kFixture, "--probe", kProbe, "--attribution", "--format", "json"}, scratch);
  const json value = run_json(
      {"inspect-heads", "--checkpoint", kFixture, "--probe", kProbe, "--patch", "--swap", "value", "--format", "json"}, scratch);
  const json key = run_json(
      {"inspect-heads", "--checkpoint", kFixture, "--probe", kProbe, "--patch", "--swap", "key", "--format", "json"}, scratch);
  const json composition = run_json({"inspect-heads", "--checkpoint", kFixture, "--composition", "--format", "json"}, scratch);

  const int64_t n_head = value["n_head"];
  ASSERT_EQ(e["kinds"].size(), 3u);
  for (const json& k : e["kinds"]) {
    const std::string kind = k["kind"];
    SCOPED_TRACE(kind);
    // Accuracy: eval --probe's, to the double.
    EXPECT_EQ(k["accuracy"].get<double>(), eval["probe_accuracy_by_kind"][kind].get<double>());
    EXPECT_EQ(k["learned"].get<bool>(), k["accuracy"].get<double>() >= 0.9);

    // Writer: the head part of --attribution --probe with the largest mean; the MLPs' sum.
    const json& a = kind_of(attribution["kinds"], kind);
    EXPECT_EQ(k["difference"], a["difference"]);
    std::string writer;
    double best = -1e300, mlps = 0.0;
    for (size_t p = 0; p < attribution["parts"].size(); ++p) {
      const std::string part = attribution["parts"][p];
      const double v = a["parts"][p];
      if (part.size() > 4 && part.substr(part.size() - 4) == ".mlp") mlps += v;
      else if (part.rfind("L", 0) == 0 && part.find(".H") != std::string::npos && v > best) best = v, writer = part;
    }
    ASSERT_EQ(k["writer"], writer);
    EXPECT_EQ(k["writer_attribution"].get<double>(), best);
    EXPECT_NEAR(k["mlp_attribution"].get<double>(), mlps, 1e-8);  // a sum of rounded parts against the rounded sum
    const int64_t writer_layer = writer[1] - '0', writer_head = writer[4] - '0';
    EXPECT_EQ(k["writer_restores"], kind_of(value["kinds"], kind)["heads"][writer_layer * n_head + writer_head]);

    // Carrier: of the earlier heads that restore >= 0.5 with the key swapped, the one the
    // writer reads most (the larger of Q and K), above that mode's baseline.
    const json& kp = kind_of(key["kinds"], kind);
    std::string carrier;
    double carrier_score = -1.0, carrier_restores = 0.0, baseline = 0.0;
    std::string type;
    for (int64_t l = 0; l < writer_layer; ++l)
      for (int64_t h = 0; h < n_head; ++h) {
        const double restores = kp["heads"][l * n_head + h];
        if (restores < 0.5) continue;
        for (const json& pair : composition["pairs"]) {
          if (pair["writer"] != json::array({l, h}) || pair["reader"] != json::array({writer_layer, writer_head})) continue;
          const bool k_reads = pair["k"].get<double>() >= pair["q"].get<double>();
          const double score = k_reads ? pair["k"].get<double>() : pair["q"].get<double>();
          const double base = composition["baseline"][k_reads ? "k" : "q"];
          if (score > base && score > carrier_score)
            carrier = head_name(l, h), carrier_score = score, carrier_restores = restores, baseline = base,
            type = k_reads ? "K" : "Q";
        }
      }
    if (carrier.empty()) {
      EXPECT_TRUE(k["carrier"].is_null());
      continue;
    }
    EXPECT_EQ(k["carrier"], carrier);
    EXPECT_EQ(k["carrier_restores"].get<double>(), carrier_restores);
    EXPECT_EQ(k["composition"], type);
    EXPECT_EQ(k["composition_score"].get<double>(), carrier_score);
    EXPECT_EQ(k["baseline"].get<double>(), baseline);
  }
  // The fixture learned colour and what, not who.
  EXPECT_FALSE(kind_of(e["kinds"], "who")["learned"].get<bool>());
  EXPECT_TRUE(kind_of(e["kinds"], "colour")["learned"].get<bool>());
  EXPECT_TRUE(kind_of(e["kinds"], "what")["learned"].get<bool>());
}

TEST(Explain, TheTableSaysWhatWasNotLearnedAndExitsZero) {
  const fs::path scratch = test::fresh_dir("explain_text");
  const test::CommandResult r = test::run_mini_gpt(
      {"inspect-heads", "--checkpoint", kFixture, "--probe", kProbe, "--explain", "--threads", "1"}, scratch);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("who: not learned (accuracy 0.447, under 0.9)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("colour: L"), std::string::npos) << r.out;
  // A mode's own options only: --text is refused.
  const test::CommandResult refused = test::run_mini_gpt(
      {"inspect-heads", "--checkpoint", kFixture, "--explain", "--text", "小丁", "--threads", "1"}, scratch);
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("--text is not used by --explain"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace mg
