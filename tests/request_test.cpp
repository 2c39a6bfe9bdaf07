// The request layer (src/request/): one parser for the command line's options and the
// server's query, one table of modes, errors naming arguments as each transport spells them;
// and a mode run through the table gives what interp's technique and report's writer give
// when called directly (on tests/fixtures/heads_ref.safetensors, 2 layers x 2 heads).
#include <gtest/gtest.h>

#include <set>

#include "inference/model_store.h"
#include "interp/score_split.h"
#include "interp/trace.h"
#include "report/edge_circuit_format.h"
#include "report/trace_format.h"
#include "request/arguments.h"
#include "request/inspect_modes.h"
#include "request/inspect_request.h"
#include "request/subject.h"
#include "test_support.h"

namespace mg {
namespace {

std::string fixture() { return (test::source_dir() / "tests" / "fixtures" / "heads_ref.safetensors").string(); }

// The message E gives in SPELLING, from the exception a call throws.
template <class F>
std::string refusal(F f, Spelling spelling) {
  try {
    f();
  } catch (const std::exception& e) {
    return request_error_message(e, spelling);
  }
  return "(no error)";
}

TEST(Request, NamesAreSpelledByTheTransport) {
  EXPECT_EQ(spelled("text_file", Spelling::command_line), "--text-file");
  EXPECT_EQ(spelled("text_file", Spelling::query), "text_file");
  EXPECT_EQ(spelled("--layer", Spelling::command_line), "--layer");
  const RequestError e({ArgumentName{"trace"}, " needs ", ArgumentName{"top_k"}, CommandLineOnly{" (or --probe FILE)"},
                        QueryOnly{" (query)"}});
  EXPECT_EQ(e.message(Spelling::command_line), "--trace needs --top-k (or --probe FILE)");
  EXPECT_EQ(e.message(Spelling::query), "trace needs top_k (query)");
  EXPECT_STREQ(e.what(), "trace needs top_k (query)");
  // interp's ArgumentError names the job's argument; each transport spells it.
  const ArgumentError a("top_k", " must be >= 0, found -1");
  EXPECT_EQ(request_error_message(a, Spelling::command_line), "--top-k must be >= 0, found -1");
  EXPECT_EQ(request_error_message(a, Spelling::query), "top_k must be >= 0, found -1");
}

TEST(Request, OneParserTypesEveryOption) {
  const InspectRequest r = parse_inspect_request({{"text", "小丁"}, {"layer", "1"}, {"head", "0"}, {"position", "3"},
                                                  {"weights", ""}, {"format", "json"}, {"top", "7"},
                                                  {"temperature", "0.5"}, {"top_k", "4"}, {"top_p", "0.9"},
                                                  {"ablate", "0.1,1.0"}, {"compare", "a"}, {"compare", "b"}});
  EXPECT_EQ(r.text, "小丁");
  EXPECT_EQ(r.layer, 1);
  EXPECT_EQ(r.head, 0);
  EXPECT_EQ(r.position, 3);
  EXPECT_TRUE(r.weights);
  EXPECT_EQ(r.format, "json");
  EXPECT_EQ(r.top, 7);
  EXPECT_EQ(r.sampling.temperature, 0.5);
  EXPECT_EQ(r.sampling.top_k, 4);
  EXPECT_EQ(r.sampling.top_p, 0.9);
  EXPECT_EQ(r.ablate, (std::vector<std::string>{"0.1", "1.0"}));
  EXPECT_EQ(r.compare, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(r.probe.has_value());
  EXPECT_EQ(parse_inspect_request({{"text", ""}}).text, "");  // given and empty, not absent
}

TEST(Request, ABadValueIsOneSentenceInEitherSpelling) {
  auto parse = [](Arguments args) { return [args] { parse_inspect_request(args); }; };
  EXPECT_EQ(refusal(parse({{"top", "0"}}), Spelling::command_line), "--top: must be an integer in [1, 10000], found \"0\"");
  EXPECT_EQ(refusal(parse({{"top_k", "x"}}), Spelling::query), "top_k: must be an integer in [0, 1048576], found \"x\"");
  EXPECT_EQ(refusal(parse({{"layer", "1e3"}}), Spelling::query),
            "layer: must be an integer in [-1048576, 1048576], found \"1e3\"");
  EXPECT_EQ(refusal(parse({{"temperature", "nan"}}), Spelling::query), "temperature: must be a finite number, found \"nan\"");
  EXPECT_EQ(refusal(parse({{"weights", "yes"}}), Spelling::command_line), "--weights: must be 1, true, 0 or false, found \"yes\"");
  EXPECT_EQ(refusal(parse({{"format", "xml"}}), Spelling::command_line), "--format: must be table or json, found \"xml\"");
  EXPECT_EQ(refusal(parse({{"text", "a"}, {"text", "b"}}), Spelling::query), "text is given twice");
  EXPECT_EQ(refusal(parse({{"seed", "-1"}}), Spelling::command_line),
            "--seed: must be an integer in [0, 2^64 - 1 = 18446744073709551615], found \"-1\"");
  // --circuit's threshold: a number in [0, 1], its sentence from the same parser.
  EXPECT_EQ(refusal(parse({{"threshold", "2"}}), Spelling::command_line), "--threshold: must be a number in [0, 1], found \"2\"");
  EXPECT_EQ(refusal(parse({{"threshold", "-0.1"}}), Spelling::query), "threshold: must be a number in [0, 1], found \"-0.1\"");
  EXPECT_EQ(refusal(parse({{"threshold", "inf"}}), Spelling::query), "threshold: must be a finite number, found \"inf\"");
  EXPECT_EQ(parse_inspect_request({{"threshold", "0.05"}}).threshold, 0.05);
  EXPECT_EQ(parse_inspect_request({{"score_split", "L2.H1"}}).score_split, "L2.H1");
}

TEST(Request, TheTableChoosesOneModeAndRefusesWhatItDoesNotRead) {
  EXPECT_STREQ(choose_mode({{"checkpoint", "c"}, {"trace", "0.1"}, {"text", "t"}}).name, "--trace");
  EXPECT_STREQ(choose_mode({{"checkpoint", "c"}, {"text", "t"}}).name, "the default view");
  EXPECT_EQ(refusal([] { choose_mode({{"checkpoint", "c"}, {"composition", ""}, {"text", "t"}}); }, Spelling::command_line),
            "--text is not used by --composition (--text goes with --html, --trace, --compare, --attribution, "
            "--logit-lens, --score-split, --next-symbol, the default view)");
  EXPECT_EQ(refusal([] { choose_mode({{"roles", ""}, {"composition", ""}}); }, Spelling::command_line),
            "--composition is not used by --roles: give one mode");
  // Every option a row reads is one the parser knows, and each row's flag is one.
  std::set<std::string> apis;
  for (const InspectMode& m : inspect_modes()) {
    for (const std::string& name : m.reads) EXPECT_NE(find_inspect_option(name), nullptr) << m.name << " reads " << name;
    if (m.flag[0]) EXPECT_NE(find_inspect_option(m.flag), nullptr) << m.name;
    if (m.api[0]) EXPECT_TRUE(apis.insert(m.api).second) << "served twice: " << m.api;
  }
  EXPECT_EQ(served_modes_list(), "trace, roles, attribution, logit-lens, composition, patch, explain, circuit, next, patterns");
}

TEST(Request, TheServerReadsNoFileAndOnlyWhatTheModeReads) {
  const InspectMode* trace = served_mode("trace");
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(served_mode("html"), nullptr);
  auto served = [&](Arguments args) { return [args, trace] { check_served_arguments(*trace, args); }; };
  EXPECT_EQ(refusal(served({{"probe", "/etc/passwd"}}), Spelling::query),
            "probe names a file: the server reads only the files named when it started");
  EXPECT_EQ(refusal(served({{"layer", "1"}}), Spelling::query),
            "/api/trace does not read \"layer\" (it reads trace, text, position, top)");
  EXPECT_EQ(refusal(served({{"format", "table"}}), Spelling::query), "format: the server answers json only");
  EXPECT_EQ(refusal(served({{"top", "1"}, {"top", "2"}}), Spelling::query), "top is given twice");
  EXPECT_EQ(refusal(served({{"trace", "0.1"}, {"text", "t"}, {"format", "json"}}), Spelling::query), "(no error)");
  // /api/circuit is computed once per model: neither its threshold nor its swap is read.
  const InspectMode* circuit = served_mode("circuit");
  ASSERT_NE(circuit, nullptr);
  EXPECT_EQ(refusal([&] { check_served_arguments(*circuit, {{"threshold", "0.1"}}); }, Spelling::query),
            "/api/circuit does not read \"threshold\" (it reads top)");
  EXPECT_EQ(refusal([&] { check_served_arguments(*circuit, {{"swap", "key"}}); }, Spelling::query),
            "/api/circuit does not read \"swap\" (it reads top)");
}

TEST(Request, AModeThroughTheTableIsTheTechniqueWrittenByReport) {
  const InspectRequest r = parse_inspect_request(
      {{"checkpoint", fixture()}, {"trace", "1.0"}, {"text", "小丁拿着红色的苹果"}, {"position", "5"}, {"format", "json"}});
  const InspectMode& mode = choose_mode({{"trace", "1.0"}});
  const ModeOutput out = run_inspect_mode(mode, r);
  EXPECT_TRUE(out.files.empty());
  const LoadedModel m = load_model(fixture());
  const HeadTrace t = trace_head(m.model, m.vocab, U"小丁拿着红色的苹果", "text", 1, 0, 5, 10);
  EXPECT_EQ(out.text, trace_json(t).dump() + "\n");
  // The refusals a mode makes before loading the model name its arguments.
  InspectRequest no_position = r;
  no_position.position.reset();
  EXPECT_EQ(refusal([&] { run_inspect_mode(mode, no_position); }, Spelling::command_line),
            "--trace needs --position P, the query position to trace");
  EXPECT_EQ(refusal([&] { run_inspect_mode(mode, no_position); }, Spelling::query),
            "trace needs position P, the query position to trace");
  // --score-split through its row: the head's name, then the text, refused before the model.
  const InspectMode& split = choose_mode({{"score_split", "1.0"}});
  InspectRequest bad_head = parse_inspect_request({{"checkpoint", fixture()}, {"score_split", "x"}, {"text", "小丁"}});
  EXPECT_EQ(refusal([&] { run_inspect_mode(split, bad_head); }, Spelling::command_line),
            "--score-split \"x\" is not a head: L3.H1 or 3.1 (layer and head, two non-negative integers)");
  InspectRequest no_text = parse_inspect_request({{"checkpoint", fixture()}, {"score_split", "1.0"}});
  EXPECT_EQ(refusal([&] { run_inspect_mode(split, no_text); }, Spelling::command_line), "--score-split needs --text TEXT");
  InspectRequest past = parse_inspect_request({{"checkpoint", fixture()}, {"score_split", "9.0"}, {"text", "小丁"}});
  EXPECT_EQ(refusal([&] { run_inspect_mode(split, past); }, Spelling::query),
            "score_split layer 9 is out of range: the model has 2 layers, valid 0..1");
  const InspectRequest json = parse_inspect_request(
      {{"checkpoint", fixture()}, {"score_split", "L1.H0"}, {"text", "小丁拿着红色的苹果"}, {"format", "json"}});
  EXPECT_EQ(run_inspect_mode(split, json).text,
            score_split_json(split_scores(m.model, m.vocab, U"小丁拿着红色的苹果", "text", 1, 0, std::nullopt)).dump() + "\n");
}

}  // namespace
}  // namespace mg
