// inspect-heads: projected_weights against the PyTorch reference, the per-head summaries
// and parameter slices, the SVG picture, the aligned tables, and every user error.
//
// Fixtures, written by the project's PyTorch reference and committed (the test needs no
// PyTorch). From the repository's root, with /usr/bin/python3 (python3-torch, python3-numpy),
// one command per line:
//   /usr/bin/python3 scripts/torch_reference.py write-checkpoint --config tests/fixtures/heads_ref.config.json --vocab-file tests/fixtures/heads_ref.vocab.txt --seed 5 --init torch-nn --no-data-sha256 --out tests/fixtures/heads_ref.safetensors
//   /usr/bin/python3 scripts/torch_reference.py write-checkpoint --config tests/fixtures/heads_ref.config.json --vocab-file tests/fixtures/heads_ref.vocab.txt --seed 5 --init torch-nn --no-data-sha256 --qk-scale 30 --out tests/fixtures/heads_ref_sharp.safetensors
//   /usr/bin/python3 scripts/torch_reference.py heads --checkpoint tests/fixtures/heads_ref.safetensors --text 小丁拿着红色的苹果。谁拿着苹果？ > tests/fixtures/heads_ref.json
//   /usr/bin/python3 scripts/torch_reference.py heads --checkpoint tests/fixtures/heads_ref_sharp.safetensors --text 小丁拿着红色的苹果。谁拿着苹果？ > tests/fixtures/heads_ref_sharp.json
// heads_ref.config.json is {"model": {"n_layer": 2, "n_embd": 16, "n_head": 2, "block_size": 16,
// "mlp_ratio": 1}, "train": {"batch_size": 4}}; heads_ref.vocab.txt is
// "小丁拿着红色的苹果。谁拿着红色的苹果？小丁。\n" (13 symbols). heads_ref_sharp holds the same
// tensors with q_proj and k_proj times 30, so its weights are far from uniform. The commands
// rewrite both .safetensors bit for bit; the JSON files are inspect-heads' JSON (docs/cli.md),
// with projected_weights as exact float32 values and the per-head summaries.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "data/utf8.h"
#include "inference/model_store.h"
#include "interp/patterns.h"
#include "report/patterns_format.h"
#include "report/patterns_svg.h"
#include "test_support.h"

namespace mg {
namespace {

using nlohmann::json;
using test::run_mini_gpt;

const std::string kText = "小丁拿着红色的苹果。谁拿着苹果？";  // 16 symbols = the fixtures' block_size

std::string fixture(const std::string& name) { return (test::source_dir() / "tests" / "fixtures" / name).string(); }

class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  json run_json(std::vector<std::string> args) {
    args.insert(args.begin(), "inspect-heads");
    args.insert(args.end(), {"--format", "json"});
    auto r = run_mini_gpt(args, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out);
  }
  static void expect_one_line_error(const test::CommandResult& r, const std::string& needle) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err.rfind("mini-gpt: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "missing \"" << needle << "\" in: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  std::filesystem::path dir_;
};

// Every row a probability distribution over keys 0..t, exactly 0 after t.
void expect_causal_rows(const json& weights, size_t T) {
  ASSERT_EQ(weights.size(), T);
  for (size_t t = 0; t < T; ++t) {
    ASSERT_EQ(weights[t].size(), T);
    double sum = 0.0;
    for (size_t s = 0; s < T; ++s) {
      const double w = weights[t][s].get<double>();
      if (s > t) {
        EXPECT_EQ(w, 0.0) << "row " << t << " key " << s;
      }
      EXPECT_GE(w, 0.0);
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << t;
  }
}

TEST_F(InspectTest, JsonRowsSumToOneWithExactZerosAboveTheDiagonalAndCountsMatchTheConfig) {
  json j = run_json({"--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", kText});
  EXPECT_EQ(j["text"], kText);
  ASSERT_EQ(j["tokens"].size(), 16u);
  EXPECT_EQ(j["tokens"][0], "小");
  EXPECT_EQ(j["tokens"][15], "？");
  ASSERT_EQ(j["layers"].size(), 2u);  // n_layer
  for (size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(j["layers"][l]["layer"], l);
    ASSERT_EQ(j["layers"][l]["heads"].size(), 2u);  // n_head
    for (size_t h = 0; h < 2; ++h) {
      const json& head = j["layers"][l]["heads"][h];
      EXPECT_EQ(head["head"], h);
      expect_causal_rows(head["projected_weights"], 16);
      for (const char* key : {"mean_entropy", "top_offset", "top_offset_share", "first_share", "importance"})
        EXPECT_TRUE(head["summary"][key].is_number()) << key;
    }
  }
}

TEST_F(InspectTest, JsonMatchesThePyTorchReferenceToOneInAHundredThousand) {
  for (const std::string name : {"heads_ref", "heads_ref_sharp"}) {
    SCOPED_TRACE(name);
    const json ref = json::parse(test::read_text(fixture(name + ".json")));
    json ours = run_json({"--checkpoint", fixture(name + ".safetensors"), "--text", ref["text"]});
    EXPECT_EQ(ours["text"], ref["text"]);
    EXPECT_EQ(ours["tokens"], ref["tokens"]);
    ASSERT_EQ(ours["layers"].size(), ref["layers"].size());
    double largest_gap = 0.0;
    for (size_t l = 0; l < ref["layers"].size(); ++l) {
      ASSERT_EQ(ours["layers"][l]["heads"].size(), ref["layers"][l]["heads"].size());
      for (size_t h = 0; h < ref["layers"][l]["heads"].size(); ++h) {
        const json& a = ours["layers"][l]["heads"][h]["projected_weights"];
        const json& b = ref["layers"][l]["heads"][h]["projected_weights"];
        ASSERT_EQ(a.size(), b.size());
        for (size_t t = 0; t < b.size(); ++t)
          for (size_t s = 0; s < b.size(); ++s)
            largest_gap = std::max(largest_gap, std::abs(a[t][s].get<double>() - b[t][s].get<double>()));
      }
    }
    EXPECT_LT(largest_gap, 1e-5);
  }
}

TEST_F(InspectTest, LayerAndHeadNarrowTheJsonToTheSameNumbers) {
  json all = run_json({"--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", kText});
  json one = run_json({"--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", kText, "--layer", "1",
                       "--head", "0"});
  ASSERT_EQ(one["layers"].size(), 1u);
  EXPECT_EQ(one["layers"][0]["layer"], 1);
  ASSERT_EQ(one["layers"][0]["heads"].size(), 1u);
  EXPECT_EQ(one["layers"][0]["heads"][0], all["layers"][1]["heads"][0]);
  json heads1 = run_json({"--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", kText, "--head", "1"});
  ASSERT_EQ(heads1["layers"].size(), 2u);
  for (const auto& layer : heads1["layers"]) {
    ASSERT_EQ(layer["heads"].size(), 1u);
    EXPECT_EQ(layer["heads"][0]["head"], 1);
  }
}

TEST(InspectSummary, KnownAnswersOnAHandMadeMatrix) {
  // Rows: [1,0,0], [.25,.75,0], [.5,.25,.25]. Offset 0 collects 1 + .75 + .25 = 2,
  // offset -1 collects .25 + .25, offset -2 collects .5.
  const std::vector<float> w = {1, 0, 0, 0.25f, 0.75f, 0, 0.5f, 0.25f, 0.25f};
  HeadSummary s = summarize_weights(w, 3);
  const double h1 = -(0.25 * std::log(0.25) + 0.75 * std::log(0.75));
  const double h2 = -(0.5 * std::log(0.5) + 2 * 0.25 * std::log(0.25));
  EXPECT_NEAR(s.mean_entropy, (0.0 + h1 + h2) / 3, 1e-9);
  EXPECT_EQ(s.top_offset, 0);
  EXPECT_NEAR(s.top_offset_share, 2.0 / 3, 1e-9);
  ASSERT_TRUE(s.first_share.has_value());
  EXPECT_NEAR(*s.first_share, (0.25 + 0.5) / 2, 1e-9);
  EXPECT_FALSE(s.importance.has_value());

  // A previous-symbol head: every row t >= 1 puts all on t - 1.
  const std::vector<float> prev = {1, 0, 0, 1, 0, 0, 0, 1, 0};
  s = summarize_weights(prev, 3);
  EXPECT_EQ(s.top_offset, -1);
  EXPECT_NEAR(s.top_offset_share, 2.0 / 3, 1e-9);
  EXPECT_NEAR(s.mean_entropy, 0.0, 1e-12);
  EXPECT_NEAR(*s.first_share, 0.5, 1e-9);
}

TEST(InspectHeads, AblatingAHeadEqualsZeroingItsColumnsOfWo) {
  // A second route to each head's importance: instead of zeroing the head's output before
  // Wo, zero the d columns of Wo that read it. Both remove exactly that head's contribution.
  LoadedModel loaded = load_model(fixture("heads_ref_sharp.safetensors"));
  const std::u32string text = decode_utf8(kText, "text");
  Inspection r = inspect_heads(loaded.model, loaded.vocab, text, "--text");
  ASSERT_TRUE(r.loss.has_value());
  ASSERT_EQ(r.heads.size(), 4u);
  const int64_t D = 16, d = 8;
  std::vector<int32_t> inputs(r.ids.begin(), r.ids.end() - 1), targets(r.ids.begin() + 1, r.ids.end());
  for (const HeadInspection& h : r.heads) {
    SCOPED_TRACE("layer " + std::to_string(h.layer) + " head " + std::to_string(h.head));
    ASSERT_TRUE(h.summary.importance.has_value());
    EXPECT_GT(std::abs(*h.summary.importance), 1e-4);  // the loss changes
    LoadedModel copy = load_model(fixture("heads_ref_sharp.safetensors"));
    Tensor& wo = copy.model.parameters().get("blocks." + std::to_string(h.layer) + ".attn.out_proj.weight").value();
    for (int64_t i = 0; i < D; ++i)
      for (int64_t j = h.head * d; j < h.head * d + d; ++j) wo[i * D + j] = 0.0f;
    NoGradGuard no_grad;
    const double loss = copy.model.loss(inputs, targets, 1, r.T - 1).value()[0];
    EXPECT_NEAR(*h.summary.ablated_loss, loss, 1e-5);
    EXPECT_NEAR(*h.summary.importance, loss - *r.loss, 1e-5);
  }
}

TEST(InspectHeads, OneSymbolTextHasNoLossAndNoImportance) {
  LoadedModel loaded = load_model(fixture("heads_ref.safetensors"));
  Inspection r = inspect_heads(loaded.model, loaded.vocab, U"小", "--text");
  EXPECT_FALSE(r.loss.has_value());
  for (const auto& h : r.heads) {
    EXPECT_EQ(h.projected_weights, std::vector<float>{1.0f});
    EXPECT_FALSE(h.summary.importance.has_value());
    EXPECT_FALSE(h.summary.first_share.has_value());
  }
  const auto j = inspection_json(r, std::nullopt, nullptr);
  EXPECT_TRUE(j["layers"][0]["heads"][0]["summary"]["importance"].is_null());
}

TEST(InspectHeads, HeadParameterSlicesPartitionTheBlocksProjections) {
  LoadedModel loaded = load_model(fixture("heads_ref_sharp.safetensors"));
  const int64_t D = 16, d = 8;
  for (int64_t layer = 0; layer < 2; ++layer) {
    std::vector<HeadParameters> heads = {head_parameters(loaded.model, layer, 0), head_parameters(loaded.model, layer, 1)};
    int64_t count = 0;
    for (size_t k = 0; k < 4; ++k) {
      const ParameterSlice& s0 = heads[0].slices[k];
      const Tensor& full = loaded.model.parameters().get(s0.tensor).value();  // [D,D]
      double squares = 0.0;
      for (int64_t h = 0; h < 2; ++h) {
        const ParameterSlice& s = heads[h].slices[k];
        count += s.values.numel();
        squares += s.norm * s.norm;
        EXPECT_EQ(s.first, h * d);
        EXPECT_EQ(s.last, h * d + d - 1);
        // Wq/Wk/Wv slice [d,D] is rows h*d.., Wo slice [D,d] is columns h*d.. of the [out,in] tensor.
        for (int64_t a = 0; a < s.values.dim(0); ++a)
          for (int64_t b = 0; b < s.values.dim(1); ++b) {
            const float expected = s.columns ? full[a * D + h * d + b] : full[(h * d + a) * D + b];
            ASSERT_EQ(s.values[a * s.values.dim(1) + b], expected) << s.name;
          }
      }
      EXPECT_EQ(s0.values.shape(), s0.columns ? Shape({D, d}) : Shape({d, D}));
      EXPECT_NEAR(squares, s0.tensor_norm * s0.tensor_norm, 1e-6 * squares);
    }
    EXPECT_EQ(count, 4 * D * D);
  }
}

// A small well-formedness check: tags nest and close, attributes are quoted, and text
// holds no bare '<' or stray '&'. Returns "" or what is wrong.
std::string xml_fault(const std::string& xml) {
  std::vector<std::string> open;
  const std::regex entity("^&(amp|lt|gt|quot|apos|#[0-9]+);");
  const std::regex attributes(R"(^(\s+[A-Za-z_:][-A-Za-z0-9_:.]*="[^"<]*")*\s*/?$)");
  size_t i = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      if (!std::regex_search(xml.substr(i, 8), entity)) return "stray & at " + std::to_string(i);
      ++i;
    } else if (xml[i] != '<') {
      ++i;
    } else if (xml.compare(i, 5, "<?xml") == 0) {
      i = xml.find("?>", i);
      if (i == std::string::npos) return "unclosed <?xml";
      i += 2;
    } else {
      const size_t end = xml.find('>', i);
      if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
      std::string tag = xml.substr(i + 1, end - i - 1);
      i = end + 1;
      if (tag.empty()) return "empty tag";
      if (tag[0] == '/') {
        if (open.empty() || open.back() != tag.substr(1)) return "</" + tag.substr(1) + "> closes nothing open";
        open.pop_back();
        continue;
      }
      const size_t name_end = tag.find_first_of(" \t\n/");
      const std::string name = tag.substr(0, name_end);
      if (!std::regex_match(tag.substr(name.size()), attributes)) return "bad attributes in <" + tag + ">";
      if (tag.back() != '/') open.push_back(name);
    }
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  return "";
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(XmlCheck, RejectsMalformedDocuments) {
  EXPECT_EQ(xml_fault("<a x=\"1\"><b/>&amp;</a>"), "");
  EXPECT_NE(xml_fault("<a><b></a></b>"), "");
  EXPECT_NE(xml_fault("<a>&</a>"), "");
  EXPECT_NE(xml_fault("<a x=1></a>"), "");
  EXPECT_NE(xml_fault("<a>"), "");
}

TEST_F(InspectTest, SvgIsWellFormedWithOneCellPerHeadAndEscapesSymbols) {
  const std::string svg_path = (dir_ / "heads.svg").string();
  auto r = run_mini_gpt({"inspect-heads", "--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", kText,
                         "--svg", svg_path},
                        dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = test::read_text(svg_path);
  EXPECT_EQ(xml_fault(svg), "");
  EXPECT_EQ(count_of(svg, "<g class=\"cell\""), 4u);  // 2 layers x 2 heads
  EXPECT_NE(svg.find(">小</text>"), std::string::npos);
  EXPECT_NE(svg.find("layer 1, head 0"), std::string::npos);
  // Only the target in the folder: no temp file left behind.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    if (entry.path().extension() == ".svg" || entry.path().filename().string().find(".tmp.") != std::string::npos) ++files;
  EXPECT_EQ(files, 1u);

  // Symbols that mean something to XML are escaped.
  Inspection made;
  made.T = 2;
  made.n_layer = made.n_head = 1;
  made.tokens = {"<", "&"};
  made.text = U"<&";
  made.heads.push_back({0, 0, {1, 0, 0.5f, 0.5f}, summarize_weights({1, 0, 0.5f, 0.5f}, 2)});
  const std::string escaped = patterns_svg(made);
  EXPECT_EQ(xml_fault(escaped), "");
  EXPECT_NE(escaped.find(">&lt;</text>"), std::string::npos);
  EXPECT_EQ(count_of(escaped, "<g class=\"cell\""), 1u);
}

TEST_F(InspectTest, SvgIntoAMissingFolderFailsWithoutPrintingOrLeavingAFile) {
  auto r = run_mini_gpt({"inspect-heads", "--checkpoint", fixture("heads_ref.safetensors"), "--text", kText, "--svg",
                         (dir_ / "no" / "such" / "dir.svg").string()},
                        dir_);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("dir.svg"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "no"));
}

TEST_F(InspectTest, EachUserErrorExitsTwoWithOneLineNamingTheFault) {
  const std::string ckpt = fixture("heads_ref.safetensors");
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "inspect-heads");
    return run_mini_gpt(args, dir_);
  };
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", "小丁拿着绿色"}), "\"绿\" (U+7EFF) at position 4");
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", kText + "小"}), "block_size of 16");
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", ""}), "--text is empty");
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", kText, "--layer", "2"}), "--layer 2 is out of range");
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", kText, "--layer", "-1"}), "valid 0..1");
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", kText, "--head", "5"}), "--head 5 is out of range");
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", "小丁", "--position", "2"}),
                        "--position 2 is out of range: the text has 2 symbols, valid 0..1");
  const std::string junk = (dir_ / "junk.safetensors").string();
  std::ofstream(junk) << "this is not a checkpoint";
  expect_one_line_error(run({"--checkpoint", junk, "--text", kText}), "junk.safetensors");
  expect_one_line_error(run({"--checkpoint", (dir_ / "missing.safetensors").string(), "--text", kText}),
                        "missing.safetensors");
  expect_one_line_error(run({"--text", kText}), "--checkpoint");
  expect_one_line_error(run({"--checkpoint", ckpt}), "--text");
  expect_one_line_error(run({"--checkpoint", ckpt, "--text", kText, "--format", "xml"}), "--format");
}

// Display columns of a UTF-8 line, as a terminal draws it.
int columns(const std::string& line) { return display_width(line); }

TEST(InspectFormat, DisplayWidthCountsWideSymbolsAsTwo) {
  EXPECT_EQ(display_width(U'a'), 1);
  EXPECT_EQ(display_width(U'小'), 2);
  EXPECT_EQ(display_width(U'。'), 2);   // U+3002
  EXPECT_EQ(display_width(U'？'), 2);   // U+FF1F full-width question mark
  EXPECT_EQ(display_width(U'\u0301'), 0);  // combining acute
  EXPECT_EQ(display_width(std::string("a小。?")), 6);
  EXPECT_EQ(symbol_label("\n"), "\\n");
  EXPECT_EQ(symbol_label(" "), "\u2423");
}

// The matrix lines of a table: those that start with "  <position> ".
std::vector<std::string> matrix_lines(const std::string& table) {
  std::vector<std::string> lines;
  std::istringstream in(table);
  const std::regex row(R"(^  +[0-9]+ .*[0-9-]$)");
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, row)) lines.push_back(line);
  return lines;
}

TEST(InspectFormat, TableRowsOfMixedCjkAndAsciiHaveOneDisplayWidth) {
  Inspection made;
  made.T = 4;
  made.n_layer = made.n_head = 1;
  made.tokens = {"a", "小", "。", "\n"};
  made.text = U"a小。\n";
  const std::vector<float> w = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0.2f, 0.3f, 0.5f, 0, 0.1f, 0.2f, 0.3f, 0.4f};
  made.heads.push_back({0, 0, w, summarize_weights(w, 4)});
  const std::string table = format_table(made, nullptr);
  const auto lines = matrix_lines(table);
  ASSERT_EQ(lines.size(), 5u) << table;  // the position header and 4 rows
  for (const auto& line : lines) EXPECT_EQ(columns(line), columns(lines[0])) << table;
  EXPECT_NE(table.find("0.300"), std::string::npos);
}

TEST_F(InspectTest, TableOfAChineseTextIsAlignedAndShowsTheSummary) {
  auto r = run_mini_gpt({"inspect-heads", "--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", kText}, dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = matrix_lines(r.out);
  ASSERT_EQ(lines.size(), 4u * 17u) << r.out;  // per head: the header of positions and 16 rows
  for (const auto& line : lines) EXPECT_EQ(columns(line), columns(lines[0])) << line;
  EXPECT_EQ(count_of(r.out, "mean row entropy"), 4u);
  EXPECT_EQ(count_of(r.out, "loss if zeroed"), 4u);  // the pages' and glossary's word (issue 56)
  EXPECT_NE(r.out.find("layer 1, head 1"), std::string::npos);
}

TEST_F(InspectTest, PositionPrintsTheQueryRowAtSixDecimalsLikeTheLesson) {
  const std::string ckpt = fixture("heads_ref_sharp.safetensors");
  json j = run_json({"--checkpoint", ckpt, "--text", "小丁拿"});
  auto r = run_mini_gpt({"inspect-heads", "--checkpoint", ckpt, "--text", "小丁拿", "--position", "1"}, dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  // "  head 0 ≈ [0.002978, 0.997022, 0]": three numbers, the masked key an exact 0.
  const std::regex line(R"(head ([01]) ≈ \[([0-9.]+), ([0-9.]+), 0\])");
  size_t found = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
    const size_t layer = found / 2, head = std::stoul((*it)[1]);
    const json& row = j["layers"][layer]["heads"][head]["projected_weights"][1];
    EXPECT_NEAR(std::stod((*it)[2]), row[0].get<double>(), 5e-7);
    EXPECT_NEAR(std::stod((*it)[3]), row[1].get<double>(), 5e-7);
    EXPECT_EQ((*it)[2].str().size(), 8u);  // 0.xxxxxx
    ++found;
  }
  EXPECT_EQ(found, 4u) << r.out;
  EXPECT_NE(r.out.find("丁"), std::string::npos);
}

TEST_F(InspectTest, ConfigAndSeedGiveTheUntrainedViewWhereTwoHeadsAlreadyDiffer) {
  const std::string config = (test::source_dir() / "configs" / "tiny.json").string();
  const std::string text = "小丁拿着红苹果。小王";  // 10 symbols of the shipped corpus's vocabulary
  json a = run_json({"--config", config, "--seed", "42", "--text", text});
  json b = run_json({"--config", config, "--seed", "42", "--text", text});
  json c = run_json({"--config", config, "--seed", "43", "--text", text});
  EXPECT_EQ(a, b);  // a seed fixes the initialisation
  EXPECT_NE(a["layers"][0]["heads"][0]["projected_weights"], c["layers"][0]["heads"][0]["projected_weights"]);
  ASSERT_EQ(a["layers"].size(), 1u);  // tiny.json: 1 layer of 2 heads
  ASSERT_EQ(a["layers"][0]["heads"].size(), 2u);
  const json& w0 = a["layers"][0]["heads"][0]["projected_weights"];
  const json& w1 = a["layers"][0]["heads"][1]["projected_weights"];
  expect_causal_rows(w0, 10);
  expect_causal_rows(w1, 10);
  double gap = 0.0;
  for (size_t t = 0; t < 10; ++t)
    for (size_t s = 0; s < 10; ++s) gap = std::max(gap, std::abs(w0[t][s].get<double>() - w1[t][s].get<double>()));
  EXPECT_GT(gap, 1e-4);  // same input, same query, different reading proportions
  auto neither = run_mini_gpt({"inspect-heads", "--seed", "1", "--text", text}, dir_);
  EXPECT_EQ(neither.status, 2);
  auto both = run_mini_gpt({"inspect-heads", "--config", config, "--checkpoint", fixture("heads_ref.safetensors"),
                            "--text", text},
                           dir_);
  EXPECT_EQ(both.status, 2);
}

TEST_F(InspectTest, WeightsPrintEachHeadsSlicesWithTheirNorms) {
  json j = run_json({"--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", "小丁", "--weights"});
  const json& p = j["layers"][0]["heads"][1]["parameters"];
  EXPECT_EQ(p["Wq"]["tensor"], "blocks.0.attn.q_proj.weight");
  EXPECT_EQ(p["Wq"]["rows"], json({8, 15}));
  EXPECT_EQ(p["Wq"]["shape"], json({8, 16}));
  EXPECT_EQ(p["Wo"]["columns"], json({8, 15}));
  EXPECT_EQ(p["Wo"]["shape"], json({16, 8}));
  double squares = 0.0;
  for (const auto& row : p["Wv"]["values"])
    for (const auto& v : row) squares += v.get<double>() * v.get<double>();
  EXPECT_NEAR(std::sqrt(squares), p["Wv"]["frobenius_norm"].get<double>(), 1e-6);
  auto r = run_mini_gpt({"inspect-heads", "--checkpoint", fixture("heads_ref_sharp.safetensors"), "--text", "小丁",
                         "--weights", "--layer", "0"},
                        dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_of(r.out, "Frobenius norm"), 8u);  // 2 heads x 4 slices
}

}  // namespace
}  // namespace mg
