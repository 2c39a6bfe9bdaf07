// The shipped corpus (data/corpus.txt, data/probe.jsonl, data/floors.json): its size and 79 symbols, that
// scripts/make_corpus.py reproduces it byte for byte, that every story fits one training
// row, and that every question really has one right answer, read from the one fact it asks
// about. The answers are re-derived here by a second implementation: a parser of the story
// sentences, not the generator.
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

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---------------------------------------------------------------- a second reading of the stories

struct Fact {
  std::u32string sentence;  // 8 symbols, 。 included (10 for a holds fact told the lesson's way)
  bool holds;               // 小X<verb><colour><object>。, else <colour><object>是小X的。
  size_t start;             // index of its first symbol
};

struct Question {
  std::string kind;
  size_t answer_position;  // index of the answer symbol (may equal text.size() for a prompt)
  char32_t expected;       // the answer the facts give
  size_t source;           // index of that same symbol inside the fact
};

// 小X<verb><colour><object>。 or, the lesson's way, 小X<verb><colour>色的<object>。
bool is_lesson_form(const std::u32string& s) { return s.size() == 10 && s.substr(5, 2) == U"色的"; }
bool is_holds_fact(const std::u32string& s) {
  return (s.size() == 8 || is_lesson_form(s)) && s[0] == U'小' && s.back() == U'。';
}
bool is_belongs_fact(const std::u32string& s) {
  return s.size() == 8 && s[3] == U'是' && s[4] == U'小' && s.substr(6) == U"的。";
}

// Reads TEXT (whole stories, or a probe prompt: a story cut right before an answer) as
// facts, and questions each answered by restating one fact: 小X有什么？ asks for the
// colour (the restated fact's symbol 4) and the object (symbol 5, or 7 after 色的) of the
// holds-fact of X; <colour><object>是谁的？ for the name (symbol 5) of the belongs-fact of
// that colour and object. Every question must match exactly one fact of its story, and
// the answer must restate it; the reading ends at a prompt's end.
std::vector<Question> read_stories(const std::u32string& text) {
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
      if (!is_holds_fact(s) && !is_belongs_fact(s)) {
        ADD_FAILURE() << "not a fact at symbol " << pos << ": " << encode_utf8(s);
        break;
      }
      facts.push_back({s, is_holds_fact(s), pos});
      pos = end + 1;
      continue;
    }
    std::vector<const Fact*> matches;
    std::vector<std::pair<std::string, size_t>> answers;  // kind, index in the restated fact
    if (s.size() == 6 && s[0] == U'小' && s.substr(2) == U"有什么？") {
      for (const Fact& f : facts)
        if (f.holds && f.sentence[1] == s[1]) matches.push_back(&f);
      answers = {{"colour", 4}, {"what", 5}};
      if (matches.size() == 1 && is_lesson_form(matches[0]->sentence)) answers[1].second = 7;
    } else if (s.size() == 7 && s.substr(3) == U"是谁的？") {
      for (const Fact& f : facts)
        if (!f.holds && f.sentence.substr(0, 3) == s.substr(0, 3)) matches.push_back(&f);
      answers = {{"who", 5}};
    } else {
      ADD_FAILURE() << "not a question at symbol " << pos << ": " << encode_utf8(s);
      break;
    }
    if (matches.size() != 1) {
      ADD_FAILURE() << "question at symbol " << pos << " matches " << matches.size() << " facts";
      break;
    }
    const Fact& fact = *matches[0];
    const size_t answer_start = end + 1;
    const std::u32string restated = text.substr(answer_start, fact.sentence.size());
    if (restated != fact.sentence.substr(0, restated.size())) {
      ADD_FAILURE() << "the answer at symbol " << answer_start << " does not restate the fact at " << fact.start;
      break;
    }
    for (const auto& [kind, index] : answers) {
      const size_t position = answer_start + index;
      if (position > text.size()) break;
      questions.push_back({kind, position, fact.sentence[index], fact.start + index});
      if (position == text.size()) return questions;  // a probe prompt ends here
    }
    pos = answer_start + fact.sentence.size();
  }
  return questions;
}

TEST(StoryReader, FindsTheFactEachKindOfQuestionAsksAbout) {
  // Known answers, so the checks below rest on a reader that is itself checked.
  const std::u32string story =
      U"小丁拿着红苹果。小王买了蓝杯子。小王有什么？小王买了蓝杯子。\n"
      U"黄帽子是小李的。白书包是小张的。白书包是谁的？白书包是小";
  const std::vector<Question> questions = read_stories(story);
  ASSERT_EQ(questions.size(), 3u);
  EXPECT_EQ(questions[0].kind, "colour");
  EXPECT_EQ(questions[0].expected, U'蓝');
  EXPECT_EQ(questions[0].source, 12u);  // 蓝 of the second fact
  EXPECT_EQ(questions[0].answer_position, 26u);
  EXPECT_EQ(questions[1].kind, "what");
  EXPECT_EQ(questions[1].expected, U'杯');
  EXPECT_EQ(questions[1].answer_position, 27u);
  EXPECT_EQ(questions[2].kind, "who");
  EXPECT_EQ(questions[2].expected, U'张');
  EXPECT_EQ(questions[2].source, 31u + 8u + 5u);
  EXPECT_EQ(questions[2].answer_position, story.size());
}

// ---------------------------------------------------------------- the corpus file

TEST(StoryReader, ReadsAHoldsFactToldTheLessonsWay) {
  // 小丁拿着红色的苹果。 (lesson 12's sentence): the object's first symbol is the fact's symbol 7.
  const std::u32string story = U"小王买了蓝杯子。小丁拿着红色的苹果。小丁有什么？小丁拿着红色的苹果。";
  const std::vector<Question> questions = read_stories(story);
  ASSERT_EQ(questions.size(), 2u);
  EXPECT_EQ(questions[0].kind, "colour");
  EXPECT_EQ(questions[0].expected, U'红');
  EXPECT_EQ(questions[0].source, 8u + 4u);
  EXPECT_EQ(questions[0].answer_position, 8u + 10u + 6u + 4u);
  EXPECT_EQ(questions[1].kind, "what");
  EXPECT_EQ(questions[1].expected, U'苹');
  EXPECT_EQ(questions[1].source, 8u + 7u);
  EXPECT_EQ(questions[1].answer_position, 8u + 10u + 6u + 7u);
}

TEST(ShippedCorpus, HasExactly79SymbolsNewlineIncludedAndAtLeast500kSymbols) {
  Corpus corpus = load_corpus(kCorpusPath, 0.1, kBlockSize);
  EXPECT_EQ(corpus.vocab.size(), 79);
  EXPECT_TRUE(corpus.vocab.find(U'\n').has_value());
  EXPECT_GE(corpus.symbols, 500'000);
  EXPECT_EQ(static_cast<int64_t>(corpus.train.size() + corpus.val.size()), corpus.symbols);
  EXPECT_EQ(read_bytes(kCorpusPath).back(), '\n');  // the last story is complete
}

TEST(ShippedCorpus, EveryStoryFitsOneRowAndEveryQuestionHasOneAnswerFromItsFact) {
  const std::u32string text = decode_utf8(read_bytes(kCorpusPath), kCorpusPath.string());
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find(U'\n', start);
    ASSERT_NE(end, std::u32string::npos);
    ASSERT_LE(static_cast<int64_t>(end + 1 - start), kBlockSize + 1) << "story at symbol " << start;
  }
  const std::vector<Question> questions = read_stories(text);
  ASSERT_GT(questions.size(), 10'000u);
  std::map<std::string, int> kinds;
  for (const Question& q : questions) {
    ++kinds[q.kind];
    ASSERT_LT(q.answer_position, text.size());
    ASSERT_EQ(text[q.answer_position], q.expected) << q.kind << " answer at symbol " << q.answer_position;
    ASSERT_EQ(text[q.source], q.expected) << q.kind << " answer at symbol " << q.answer_position;
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
    const std::vector<Question> questions = read_stories(item.prompt);
    ASSERT_FALSE(questions.empty()) << "item " << i;
    const Question& last = questions.back();
    EXPECT_EQ(last.answer_position, item.prompt.size()) << "item " << i;
    EXPECT_EQ(last.kind, item.kind) << "item " << i;
    EXPECT_EQ(last.expected, item.answer) << "item " << i << ": " << encode_utf8(item.prompt);
    EXPECT_EQ(item.prompt[last.source], item.answer) << "item " << i;
  }
  EXPECT_EQ(kinds.size(), 3u);
}

TEST(ShippedProbeSet, IsHeldOutFromTheCorpus) {
  // Stories of another seed: no probe prompt that starts a story occurs in the corpus as a
  // story start (three shared facts would be a near-impossible coincidence, ~e^-25).
  const std::string corpus = "\n" + read_bytes(kCorpusPath);
  int story_starts = 0, found = 0;
  for (const ProbeItem& item : load_probe_set(kProbePath)) {
    const std::string prompt = encode_utf8(item.prompt);
    if (item.prompt.size() < 24) continue;  // at least three facts
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
  for (const char* name : {"corpus.txt", "probe.jsonl", "README.md", "floors.json"}) {
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
