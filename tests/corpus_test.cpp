// The shipped corpus (data/corpus.txt, data/probe.jsonl): its size and 79 symbols, that
// scripts/make_corpus.py reproduces it byte for byte, and that every question really has
// one right answer readable from the preceding 60 symbols. The answers are re-derived
// here by a second implementation: a parser of the story sentences, not the generator.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/corpus.h"
#include "data/probe.h"
#include "data/utf8.h"
#include "data/vocab.h"

namespace mg {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = MINI_GPT_SOURCE_DIR;
const fs::path kCorpusPath = kSourceDir / "data" / "corpus.txt";
const fs::path kProbePath = kSourceDir / "data" / "probe.jsonl";
constexpr int64_t kBlockSize = 64;
constexpr int64_t kAnswerReach = 60;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---------------------------------------------------------------- a second reading of the stories

struct Fact {
  char32_t name;
  std::u32string verb;  // 2 symbols
  char32_t colour;
  std::u32string object;  // 2 symbols
  size_t start;           // index of its 小
};

struct Question {
  std::string kind;
  size_t answer_position;  // index of the answer symbol (may equal text.size() for a prompt)
  char32_t expected;       // the answer the facts give
  size_t source;           // index of that same symbol inside the fact
};

// Reads TEXT (whole sentences, starting at a sentence start) as facts
// "小X<verb><colour>色的<object>。" and questions with their answers. A question whose
// answer lies at or past the end of TEXT ends the reading (a probe prompt). With
// require_fact, every question must match exactly one fact; without, questions whose fact
// was cropped away are skipped, except the last one.
std::vector<Question> read_stories(const std::u32string& text, bool require_fact) {
  std::vector<Question> questions;
  std::vector<Fact> facts;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == U'\n') {  // a new story: earlier facts no longer count
      facts.clear();
      ++pos;
      continue;
    }
    const size_t end = text.find_first_of(U"。？", pos);
    if (end == std::u32string::npos) {
      ADD_FAILURE() << "unterminated sentence at symbol " << pos;
      break;
    }
    const std::u32string s = text.substr(pos, end + 1 - pos);
    if (text[end] == U'。') {
      if (s.size() != 10 || s[0] != U'小' || s[5] != U'色' || s[6] != U'的') {
        ADD_FAILURE() << "not a fact at symbol " << pos << ": " << encode_utf8(s);
        break;
      }
      facts.push_back({s[1], s.substr(2, 2), s[4], s.substr(7, 2), pos});
      pos = end + 1;
      continue;
    }
    // A question: which facts does it match, and where is its answer symbol?
    std::vector<Fact> matches;
    Question q;
    size_t answer_offset_in_fact = 0;
    if (s.size() == 9 && s[0] == U'谁' && s[4] == U'色' && s[5] == U'的') {  // 谁VVC色的OO？ -> 小X。
      q.kind = "who";
      for (const Fact& f : facts)
        if (f.verb == s.substr(1, 2) && f.colour == s[3] && f.object == s.substr(6, 2)) matches.push_back(f);
      q.answer_position = end + 2;
      answer_offset_in_fact = 1;
    } else if (s.size() == 11 && s[0] == U'小' && s[2] == U'的' && s.substr(5) == U"是什么颜色？") {  // -> C色。
      q.kind = "colour";
      for (const Fact& f : facts)
        if (f.name == s[1] && f.object == s.substr(3, 2)) matches.push_back(f);
      q.answer_position = end + 1;
      answer_offset_in_fact = 4;
    } else if (s.size() == 7 && s[0] == U'小' && s.substr(4) == U"什么？") {  // 小XVV什么？ -> OO。
      q.kind = "what";
      for (const Fact& f : facts)
        if (f.name == s[1] && f.verb == s.substr(2, 2)) matches.push_back(f);
      q.answer_position = end + 1;
      answer_offset_in_fact = 7;
    } else {
      ADD_FAILURE() << "not a question at symbol " << pos << ": " << encode_utf8(s);
      break;
    }
    const bool last = q.answer_position >= text.size();
    if (matches.size() == 1) {
      q.source = matches[0].start + answer_offset_in_fact;
      q.expected = text[q.source];
      questions.push_back(q);
    } else if (require_fact || last || !matches.empty()) {
      ADD_FAILURE() << q.kind << " question at symbol " << pos << " matches " << matches.size() << " facts";
    }
    if (last) break;
    const size_t answer_end = text.find(U'。', end + 1);
    if (answer_end == std::u32string::npos) {
      ADD_FAILURE() << "unanswered question at symbol " << pos;
      break;
    }
    pos = answer_end + 1;
  }
  return questions;
}

TEST(StoryReader, FindsTheFactEachKindOfQuestionAsksAbout) {
  // Known answers, so the checks below rest on a reader that is itself checked.
  const std::u32string story = U"小丁拿着红色的苹果。小王买了蓝色的杯子。谁买了蓝色的杯子？小王。小丁的苹果是什么颜色？红色。小王买了什么？";
  const std::vector<Question> questions = read_stories(story, /*require_fact=*/true);
  ASSERT_EQ(questions.size(), 3u);
  EXPECT_EQ(questions[0].kind, "who");
  EXPECT_EQ(questions[0].expected, U'王');
  EXPECT_EQ(questions[0].source, 11u);  // 王 of the second fact
  EXPECT_EQ(questions[0].answer_position, 30u);
  EXPECT_EQ(questions[1].kind, "colour");
  EXPECT_EQ(questions[1].expected, U'红');
  EXPECT_EQ(questions[1].source, 4u);
  EXPECT_EQ(questions[1].answer_position, 43u);
  EXPECT_EQ(questions[2].kind, "what");
  EXPECT_EQ(questions[2].expected, U'杯');
  EXPECT_EQ(questions[2].answer_position, story.size());
}

// ---------------------------------------------------------------- the corpus file

TEST(ShippedCorpus, HasExactly79SymbolsNewlineIncludedAndAtLeast500kSymbols) {
  Corpus corpus = load_corpus(kCorpusPath, 0.1, kBlockSize);
  EXPECT_EQ(corpus.vocab.size(), 79);
  EXPECT_TRUE(corpus.vocab.find(U'\n').has_value());
  EXPECT_GE(corpus.symbols, 500'000);
  EXPECT_EQ(static_cast<int64_t>(corpus.train.size() + corpus.val.size()), corpus.symbols);
  EXPECT_EQ(read_bytes(kCorpusPath).back(), '\n');  // the last story is complete
}

TEST(ShippedCorpus, EveryQuestionHasOneAnswerFromTheFactWithinThePreceding60Symbols) {
  const std::u32string text = decode_utf8(read_bytes(kCorpusPath), kCorpusPath.string());
  const std::vector<Question> questions = read_stories(text, /*require_fact=*/true);
  ASSERT_GT(questions.size(), 10'000u);
  std::map<std::string, int> kinds;
  for (const Question& q : questions) {
    ++kinds[q.kind];
    ASSERT_LT(q.answer_position, text.size());
    ASSERT_EQ(text[q.answer_position], q.expected) << q.kind << " answer at symbol " << q.answer_position;
    ASSERT_LE(q.answer_position - q.source, static_cast<size_t>(kAnswerReach))
        << q.kind << " answer at symbol " << q.answer_position << " copies symbol " << q.source;
  }
  EXPECT_EQ(kinds.size(), 3u);  // who, colour and what all occur
  for (const auto& [kind, count] : kinds) EXPECT_GT(count, 1000) << kind;
}

// ---------------------------------------------------------------- the probe set

TEST(ShippedProbeSet, AnswersAreInTheVocabularyPromptsFitAndTheFactsGiveTheAnswer) {
  const Vocab vocab = load_corpus(kCorpusPath, 0.1, kBlockSize).vocab;
  const std::vector<ProbeItem> items = load_probe_set(kProbePath);
  EXPECT_EQ(items.size(), 500u);
  std::map<std::string, int> kinds;
  for (size_t i = 0; i < items.size(); ++i) {
    const ProbeItem& item = items[i];
    ++kinds[item.kind];
    EXPECT_TRUE(vocab.find(item.answer).has_value()) << "item " << i;
    EXPECT_NO_THROW(vocab.encode(item.prompt, "probe item " + std::to_string(i)));
    EXPECT_LE(static_cast<int64_t>(item.prompt.size()), kBlockSize) << "item " << i;
    // The prompt ends right before the answer: its last question's answer position is
    // the prompt's end, and the fact it asks about says the item's answer.
    const std::vector<Question> questions = read_stories(item.prompt, /*require_fact=*/false);
    ASSERT_FALSE(questions.empty()) << "item " << i;
    const Question& last = questions.back();
    EXPECT_EQ(last.answer_position, item.prompt.size()) << "item " << i;
    EXPECT_EQ(last.kind, item.kind) << "item " << i;
    EXPECT_EQ(last.expected, item.answer) << "item " << i << ": " << encode_utf8(item.prompt);
    EXPECT_LE(last.answer_position - last.source, static_cast<size_t>(kAnswerReach)) << "item " << i;
  }
  EXPECT_EQ(kinds.size(), 3u);
}

TEST(ShippedProbeSet, IsHeldOutFromTheCorpus) {
  // Stories of another seed: no probe prompt that starts a story occurs in the corpus as a
  // story start (a shared full story would be a near-impossible coincidence, ~e^-20).
  const std::string corpus = "\n" + read_bytes(kCorpusPath);
  int story_starts = 0, found = 0;
  for (const ProbeItem& item : load_probe_set(kProbePath)) {
    const std::string prompt = encode_utf8(item.prompt);
    if (item.prompt.size() < 20) continue;  // at least two facts
    ++story_starts;
    if (corpus.find("\n" + prompt) != std::string::npos) ++found;
  }
  EXPECT_GT(story_starts, 100);
  EXPECT_EQ(found, 0);
}

// ---------------------------------------------------------------- the generator

// "python3" on PATH, else /usr/bin/python3, else nothing.
std::optional<std::string> find_python() {
  if (std::system("command -v python3 > /dev/null 2>&1") == 0) return "python3";
  if (fs::exists("/usr/bin/python3")) return "/usr/bin/python3";
  return std::nullopt;
}

TEST(CorpusGenerator, ReproducesCorpusAndProbeSetByteForByte) {
  const std::optional<std::string> python = find_python();
  if (!python) GTEST_SKIP() << "neither python3 on PATH nor /usr/bin/python3 exists";
  const fs::path out = fs::temp_directory_path() / ("mg_corpus_test_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string command = *python + " \"" + (kSourceDir / "scripts" / "make_corpus.py").string() +
                              "\" --out \"" + out.string() + "\" > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  for (const char* name : {"corpus.txt", "probe.jsonl", "README.md"}) {
    const std::string generated = read_bytes(out / name);
    const std::string shipped = read_bytes(kSourceDir / "data" / name);
    EXPECT_FALSE(generated.empty()) << name;
    EXPECT_TRUE(generated == shipped) << "data/" << name << " differs from what scripts/make_corpus.py writes ("
                                      << generated.size() << " vs " << shipped.size() << " bytes)";
  }
  fs::remove_all(out);
}

}  // namespace
}  // namespace mg
