// The shipped corpus (data/corpus.txt, data/probe.jsonl, data/floors.json): its size and 79 symbols, that
// scripts/make_corpus.py reproduces it byte for byte, that every story fits one training
// row, and that every question really has one right answer, read from the one fact it asks
// about. The same for corpus v6 (make_corpus.py --variant v6), generated here, with each
// probe item's distractors and key. The answers are re-derived here by a second
// implementation: a parser of the story sentences, not the generator.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
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
  std::u32string sentence;  // 10 symbols, 。 included (a belongs fact: 8)
  bool holds;               // 小X<verb><colour>色的<object>。, else <colour><object>是小X的。
  size_t start;             // index of its first symbol
};

struct Question {
  std::string kind;
  size_t answer_position;  // index of the answer symbol (may equal text.size() for a prompt)
  char32_t expected;       // the answer the facts give
  size_t source;           // index of that same symbol inside the fact
  int distractors;         // the story's other facts that share the question's whole cue
  bool partly;             // another fact shares some of the cue, not all
  size_t key;              // index of the symbol that binds the fact: its name, or its object's first
};

// A holds fact's parts: 小 name verb(2) colour 色的 object(2) 。
bool is_holds_fact(const std::u32string& s) {
  return s.size() == 10 && s[0] == U'小' && s.substr(5, 2) == U"色的" && s.back() == U'。';
}
bool is_belongs_fact(const std::u32string& s) {
  return s.size() == 8 && s[3] == U'是' && s[4] == U'小' && s.substr(6) == U"的。";
}
std::u32string verb(const Fact& f) { return f.sentence.substr(2, 2); }
char32_t holds_colour(const Fact& f) { return f.sentence[4]; }
std::u32string holds_object(const Fact& f) { return f.sentence.substr(7, 2); }

// Reads TEXT (whole stories, or a probe prompt: a story cut right before an answer) as
// facts, and questions each answered by restating one fact:
//   小X有什么？                 colour (the restated fact's symbol 4; cue: the verb) and what
//                               (symbol 7; cue: the verb and the colour) of X's holds fact
//   谁<verb><colour>色的<object>？  holder (symbol 1, the name; cue: the verb and the colour)
//   小X<verb>什么颜色的<object>？  which_colour (symbol 4; cue: the verb)
//   <colour><object>是谁的？       who (symbol 5, the name; cue: the colour) of that belongs fact
// Every question must match exactly one fact of its story, and the answer must restate it;
// the reading ends at a prompt's end. A distractor is another fact of the story with the
// same cue, counted here from the sentences, not taken from the generator.
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
    struct Answer {
      std::string kind;
      size_t index;                                       // in the restated fact
      // How many of the cue's symbols the first fact shares with the second, and of how many.
      std::function<int(const Fact&, const Fact&)> shared;
      int cue_size;
      size_t key;  // in the fact
    };
    std::vector<Answer> answers;
    const auto same_verb = [](const Fact& a, const Fact& b) { return static_cast<int>(verb(a) == verb(b)); };
    const auto same_verb_colour = [](const Fact& a, const Fact& b) {
      return static_cast<int>(verb(a) == verb(b)) + static_cast<int>(holds_colour(a) == holds_colour(b));
    };
    if (s.size() == 6 && s[0] == U'小' && s.substr(2) == U"有什么？") {
      for (const Fact& f : facts)
        if (f.holds && f.sentence[1] == s[1]) matches.push_back(&f);
      answers = {{"colour", 4, same_verb, 1, 1}, {"what", 7, same_verb_colour, 2, 1}};
    } else if (s.size() == 9 && s[0] == U'谁' && s.substr(4, 2) == U"色的") {
      for (const Fact& f : facts)
        if (f.holds && f.sentence.substr(2, 7) == s.substr(1, 7)) matches.push_back(&f);
      answers = {{"holder", 1, same_verb_colour, 2, 7}};
    } else if (s.size() == 12 && s[0] == U'小' && s.substr(4, 5) == U"什么颜色的") {
      for (const Fact& f : facts)
        if (f.holds && f.sentence[1] == s[1] && verb(f) == s.substr(2, 2) && holds_object(f) == s.substr(9, 2))
          matches.push_back(&f);
      answers = {{"which_colour", 4, same_verb, 1, 1}};
    } else if (s.size() == 7 && s.substr(3) == U"是谁的？") {
      for (const Fact& f : facts)
        if (!f.holds && f.sentence.substr(0, 3) == s.substr(0, 3)) matches.push_back(&f);
      answers = {{"who", 5, [](const Fact& a, const Fact& b) { return static_cast<int>(a.sentence[0] == b.sentence[0]); },
                  1, 1}};
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
    for (const Answer& a : answers) {
      const size_t position = answer_start + a.index;
      if (position > text.size()) break;
      int distractors = 0;
      bool partly = false;
      for (const Fact& f : facts) {
        if (&f == &fact || f.holds != fact.holds) continue;
        const int shared = a.shared(f, fact);
        distractors += shared == a.cue_size;
        partly = partly || (shared > 0 && shared < a.cue_size);
      }
      questions.push_back({a.kind, position, fact.sentence[a.index], fact.start + a.index, distractors, partly,
                           fact.start + a.key});
      if (position == text.size()) return questions;  // a probe prompt ends here
    }
    pos = answer_start + fact.sentence.size();
  }
  return questions;
}

TEST(StoryReader, FindsTheFactEachKindOfQuestionAsksAbout) {
  // Known answers (the lesson's sentence among them), so the checks below rest on a reader
  // that is itself checked.
  const std::u32string story =
      U"小丁拿着红色的苹果。小王拿着蓝色的杯子。小王有什么？小王拿着蓝色的杯子。\n"
      U"黄帽子是小李的。黄书包是小张的。黄书包是谁的？黄书包是小张的。\n"
      U"小丁拿着红色的苹果。小王拿着红色的杯子。谁拿着红色的杯子？小王拿着红色的杯子。"
      U"小丁拿着什么颜色的苹果？小丁拿着";
  const std::vector<Question> questions = read_stories(story);
  ASSERT_EQ(questions.size(), 5u);
  EXPECT_EQ(questions[0].kind, "colour");
  EXPECT_EQ(questions[0].expected, U'蓝');
  EXPECT_EQ(questions[0].source, 10u + 4u);  // 蓝 of the second fact
  EXPECT_EQ(questions[0].answer_position, 20u + 6u + 4u);
  EXPECT_EQ(questions[0].distractors, 1);  // both facts 拿着
  EXPECT_EQ(questions[1].kind, "what");
  EXPECT_EQ(questions[1].expected, U'杯');
  EXPECT_EQ(questions[1].answer_position, 20u + 6u + 7u);
  EXPECT_EQ(questions[1].distractors, 0);  // 拿着 and 蓝: one fact
  const size_t second = 37;
  EXPECT_EQ(questions[2].kind, "who");
  EXPECT_EQ(questions[2].expected, U'张');
  EXPECT_EQ(questions[2].source, second + 8u + 5u);
  EXPECT_EQ(questions[2].distractors, 1);  // both 黄
  const size_t third = second + 32;
  EXPECT_EQ(questions[3].kind, "holder");
  EXPECT_EQ(questions[3].expected, U'王');
  EXPECT_EQ(questions[3].source, third + 10u + 1u);
  EXPECT_EQ(questions[3].answer_position, third + 20u + 9u + 1u);
  EXPECT_EQ(questions[3].distractors, 1);  // both 拿着 and 红: only the object tells
  EXPECT_EQ(questions[4].kind, "which_colour");
  EXPECT_EQ(questions[4].expected, U'红');
  EXPECT_EQ(questions[4].source, third + 4u);
  EXPECT_EQ(questions[4].answer_position, story.size());
  EXPECT_EQ(questions[4].distractors, 1);
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

// Every story of TEXT fits one row and every question has one answer from its fact; the
// kinds found, with how many questions of each have distractors.
struct KindCounts {
  std::map<std::string, int> questions, distracted;
};
KindCounts check_stories(const std::u32string& text) {
  KindCounts counts;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find(U'\n', start);
    if (end == std::u32string::npos) {
      ADD_FAILURE() << "the text does not end with a newline";
      return counts;
    }
    if (static_cast<int64_t>(end + 1 - start) > kBlockSize + 1) {
      ADD_FAILURE() << "story at symbol " << start << " has " << end + 1 - start << " symbols";
      return counts;
    }
  }
  const std::vector<Question> questions = read_stories(text);
  EXPECT_GT(questions.size(), 10'000u);
  for (const Question& q : questions) {
    ++counts.questions[q.kind];
    counts.distracted[q.kind] += q.distractors > 0;
    if (q.answer_position >= text.size() || text[q.answer_position] != q.expected || text[q.source] != q.expected) {
      ADD_FAILURE() << q.kind << " answer at symbol " << q.answer_position;
      break;
    }
  }
  return counts;
}

TEST(ShippedCorpus, EveryStoryFitsOneRowAndEveryQuestionHasOneAnswerFromItsFact) {
  const KindCounts counts = check_stories(decode_utf8(read_bytes(kCorpusPath), kCorpusPath.string()));
  EXPECT_EQ(counts.questions.size(), 3u);  // who, colour and what all occur
  for (const auto& [kind, count] : counts.questions) {
    EXPECT_GT(count, 1000) << kind;
    EXPECT_EQ(counts.distracted.at(kind), 0) << kind << ": v5's facts never share a verb or a colour";
  }
}

// ---------------------------------------------------------------- the probe set

// Every item of ITEMS: its answer in VOCAB, its prompt within a row, and the fact its last
// question asks about gives its answer at its source; tagged items' distractors and key are
// the reader's. Returns the items per (kind, has distractors).
std::map<std::pair<std::string, bool>, int> check_probe(const std::vector<ProbeItem>& items, const Vocab& vocab) {
  std::map<std::pair<std::string, bool>, int> buckets;
  for (size_t i = 0; i < items.size(); ++i) {
    const ProbeItem& item = items[i];
    EXPECT_TRUE(vocab.find(item.answer).has_value()) << "item " << i;
    EXPECT_NO_THROW(vocab.encode(item.prompt, "probe item " + std::to_string(i)));
    EXPECT_LE(static_cast<int64_t>(item.prompt.size()), kBlockSize) << "item " << i;
    // The prompt ends right before the answer: its last question's answer position is
    // the prompt's end, and the fact it asks about says the item's answer.
    const std::vector<Question> questions = read_stories(item.prompt);
    if (questions.empty()) {
      ADD_FAILURE() << "item " << i << " holds no question";
      continue;
    }
    const Question& last = questions.back();
    EXPECT_EQ(last.answer_position, item.prompt.size()) << "item " << i;
    EXPECT_EQ(last.kind, item.kind) << "item " << i;
    EXPECT_EQ(last.expected, item.answer) << "item " << i << ": " << encode_utf8(item.prompt);
    EXPECT_EQ(item.prompt[last.source], item.answer) << "item " << i;
    EXPECT_EQ(item.source, static_cast<int64_t>(last.source)) << "item " << i;
    if (item.distractors >= 0) {  // corpus v6's tags, re-derived
      EXPECT_EQ(item.distractors, last.distractors) << "item " << i << ": " << encode_utf8(item.prompt);
      EXPECT_FALSE(item.distractors == 0 && last.partly) << "item " << i << ": no distractor, yet a cue symbol is shared";
      EXPECT_EQ(item.key, std::vector<int64_t>{static_cast<int64_t>(last.key)}) << "item " << i;
      EXPECT_FALSE(item.cue.empty()) << "item " << i;
    }
    ++buckets[{item.kind, item.distractors > 0}];
  }
  return buckets;
}

TEST(ShippedProbeSet, AnswersAreInTheVocabularyPromptsFitAndTheFactsGiveTheAnswer) {
  const Vocab vocab = load_corpus(kCorpusPath, 0.1, kBlockSize).vocab;
  const std::vector<ProbeItem> items = load_probe_set(kProbePath);
  EXPECT_EQ(items.size(), 500u);
  const auto buckets = check_probe(items, vocab);
  EXPECT_EQ(buckets.size(), 3u);  // who, colour, what, untagged
}

TEST(ShippedProbeSet, IsHeldOutFromTheCorpus) {
  // Stories of another seed: no probe prompt that starts a story occurs in the corpus as a
  // story start (three shared facts would be a near-impossible coincidence, ~e^-25).
  const std::string corpus = "\n" + read_bytes(kCorpusPath);
  int story_starts = 0, found = 0;
  for (const ProbeItem& item : load_probe_set(kProbePath)) {
    const std::string prompt = encode_utf8(item.prompt);
    const size_t question = item.prompt.find(U'？');
    if (std::count(item.prompt.begin(), item.prompt.begin() + question, U'。') < 3) continue;  // three facts
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

// Corpus v6 (issue 46): stories where only binding a name (or an object) to its fact answers
// every question. Generated at 500,000 symbols, read by the reader above: every question
// has one answer, every kind occurs and often has distractors, and the balanced probe's
// tags are the reader's.
TEST(CorpusV6, EveryQuestionHasOneAnswerAndTheProbesTagsAreTheReaders) {
  const std::optional<std::string> python = find_python();
  if (!python) GTEST_SKIP() << "neither python3 on PATH nor /usr/bin/python3 exists";
  const fs::path out = fs::temp_directory_path() / ("mg_corpus_v6_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string command = *python + " \"" + (kSourceDir / "scripts" / "make_corpus.py").string() +
                              "\" --variant v6 --symbols 500000 --out \"" + out.string() + "\" > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const Corpus corpus = load_corpus(out / "corpus.txt", 0.1, kBlockSize);
  EXPECT_EQ(corpus.vocab.size(), 79);
  EXPECT_TRUE(corpus.vocab.find(U'颜').has_value());  // 什么颜色
  const KindCounts counts = check_stories(decode_utf8(read_bytes(out / "corpus.txt"), "v6 corpus.txt"));
  EXPECT_EQ(counts.questions.size(), 5u);
  for (const auto& [kind, count] : counts.questions) {
    EXPECT_GT(count, 1000) << kind;
    EXPECT_GT(counts.distracted.at(kind), count / 5) << kind << ": facts share cues often";
  }
  const std::vector<ProbeItem> items = load_probe_set(out / "probe.jsonl");
  EXPECT_EQ(items.size(), 1000u);
  const auto buckets = check_probe(items, corpus.vocab);
  EXPECT_EQ(buckets.size(), 10u);
  for (const auto& [bucket, count] : buckets) EXPECT_EQ(count, 100) << bucket.first << " " << bucket.second;
  fs::remove_all(out);
}

}  // namespace
}  // namespace mg
