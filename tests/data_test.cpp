// The data layer: strict UTF-8, the code-point vocabulary, the train/validation split,
// the batch sampler's windows and its resumable state, and probe-set loading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "data/batch_sampler.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "data/token_ids.h"
#include "data/utf8.h"
#include "data/vocab.h"
#include "core/error.h"
#include "error_support.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using test::input_error_of;

// A fresh folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("mg_data_test_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream out(path_ / name, std::ios::binary);
    out << bytes;
    return path_ / name;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// ---------------------------------------------------------------- UTF-8

TEST(Utf8, DecodesOneTwoThreeAndFourByteSequences) {
  // "a" U+0061, "é" U+00E9 (C3 A9), "小" U+5C0F (E5 B0 8F), "😀" U+1F600 (F0 9F 98 80), "\n".
  const std::string bytes = "a\xC3\xA9\xE5\xB0\x8F\xF0\x9F\x98\x80\n";
  EXPECT_EQ(decode_utf8(bytes, "t"), (std::u32string{0x61, 0xE9, 0x5C0F, 0x1F600, 0x0A}));
  EXPECT_EQ(encode_utf8(decode_utf8(bytes, "t")), bytes);
  EXPECT_EQ(encode_utf8(U'小'), "\xE5\xB0\x8F");
  EXPECT_EQ(decode_utf8("小丁拿着红色的苹果。", "t").size(), 10u);
}

TEST(Utf8, BoundaryCodePointsHaveTheirShortestEncodings) {
  const std::vector<std::pair<char32_t, std::string>> cases = {
      {0x7F, "\x7F"},          {0x80, "\xC2\x80"},         {0x7FF, "\xDF\xBF"},
      {0x800, "\xE0\xA0\x80"}, {0xD7FF, "\xED\x9F\xBF"},   {0xE000, "\xEE\x80\x80"},
      {0xFFFF, "\xEF\xBF\xBF"}, {0x10000, "\xF0\x90\x80\x80"}, {0x10FFFF, "\xF4\x8F\xBF\xBF"},
  };
  for (const auto& [code_point, bytes] : cases) {
    EXPECT_EQ(encode_utf8(code_point), bytes) << code_point_label(code_point);
    EXPECT_EQ(decode_utf8(bytes, "t"), std::u32string(1, code_point)) << code_point_label(code_point);
  }
}

TEST(Utf8, EachInvalidKindNamesSourceAndByteOffset) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ab\x80", "f.txt: invalid UTF-8 at byte offset 2 (unexpected continuation byte)"},
      {"a\xC0\xAF", "f.txt: invalid UTF-8 at byte offset 1 (overlong encoding)"},         // '/' in 2 bytes
      {"xy\xE0\x80\xAF", "f.txt: invalid UTF-8 at byte offset 2 (overlong encoding)"},     // '/' in 3 bytes
      {"\xF0\x80\x80\xAF", "f.txt: invalid UTF-8 at byte offset 0 (overlong encoding)"},   // '/' in 4 bytes
      {"小\xED\xA0\x80", "f.txt: invalid UTF-8 at byte offset 3 (UTF-16 surrogate)"},      // U+D800
      {"\xF4\x90\x80\x80", "f.txt: invalid UTF-8 at byte offset 0 (code point above U+10FFFF)"},
      {"a\xF5\x80\x80\x80", "f.txt: invalid UTF-8 at byte offset 1 (code point above U+10FFFF)"},
      {"小\xE4\xB8", "f.txt: invalid UTF-8 at byte offset 3 (truncated sequence)"},        // ends early
      {"\xE4\xB8" "A", "f.txt: invalid UTF-8 at byte offset 0 (truncated sequence)"},      // cut by 'A'
      {"ok\xF0\x9F\x98", "f.txt: invalid UTF-8 at byte offset 2 (truncated sequence)"},
  };
  for (const auto& [bytes, message] : cases) EXPECT_EQ(input_error_of([&] { decode_utf8(bytes, "f.txt"); }), message);
}

// ---------------------------------------------------------------- vocabulary

TEST(Vocab, SortedByCodePointWithIdsAsRanks) {
  const std::u32string text = U"小丁拿着红色的苹果。";
  Vocab vocab = Vocab::from_text(text);
  // 。U+3002 丁U+4E01 小U+5C0F 拿U+62FF 果U+679C 的U+7684 着U+7740 红U+7EA2 色U+8272 苹U+82F9
  const std::vector<std::string> expected = {"。", "丁", "小", "拿", "果", "的", "着", "红", "色", "苹"};
  EXPECT_EQ(vocab.size(), 10);
  EXPECT_EQ(vocab.symbols(), expected);
  EXPECT_EQ(vocab.encode(text, "t"), (std::vector<int32_t>{2, 1, 3, 6, 7, 8, 5, 9, 4, 0}));
  EXPECT_EQ(vocab.decode(vocab.encode(text, "t")), "小丁拿着红色的苹果。");
  EXPECT_EQ(vocab.symbol(2), "小");
  EXPECT_EQ(vocab.code_point(0), U'。');
  EXPECT_EQ(vocab.find(U'苹'), 9);
  EXPECT_EQ(vocab.find(U'蓝'), std::nullopt);
  // Repetition and order of appearance do not change the vocabulary.
  EXPECT_EQ(Vocab::from_text(U"。。果小丁拿着红色的苹果小").symbols(), expected);
}

TEST(Vocab, FromSymbolsRebuildsAndValidatesACheckpointList) {
  Vocab vocab = Vocab::from_text(U"b\na小");
  Vocab rebuilt = Vocab::from_symbols(vocab.symbols(), "ckpt");
  EXPECT_EQ(rebuilt.symbols(), (std::vector<std::string>{"\n", "a", "b", "小"}));
  EXPECT_EQ(rebuilt.encode(U"a小\n", "t"), (std::vector<int32_t>{1, 3, 0}));

  EXPECT_EQ(input_error_of([] { Vocab::from_symbols({"a", "bc"}, "ckpt"); }),
            "ckpt: entry 1 has 2 code points, expected exactly 1");
  EXPECT_EQ(input_error_of([] { Vocab::from_symbols({"a", ""}, "ckpt"); }),
            "ckpt: entry 1 has 0 code points, expected exactly 1");
  EXPECT_EQ(input_error_of([] { Vocab::from_symbols({"b", "a"}, "ckpt"); }),
            "ckpt: entry 1 \"a\" (U+0061) sorts before entry 0 \"b\" (U+0062); expected distinct symbols sorted by code point");
  EXPECT_EQ(input_error_of([] { Vocab::from_symbols({"a", "小", "小"}, "ckpt"); }),
            "ckpt: entry 2 \"小\" (U+5C0F) repeats entry 1 \"小\" (U+5C0F); expected distinct symbols sorted by code point");
  EXPECT_EQ(input_error_of([] { Vocab::from_symbols({"a", "\xE5\xB0"}, "ckpt"); }),
            "ckpt: entry 1: invalid UTF-8 at byte offset 0 (truncated sequence)");
  EXPECT_EQ(input_error_of([] { Vocab::from_symbols({}, "ckpt"); }), "ckpt: the vocabulary is empty");
}

TEST(Vocab, EncodeErrorNamesSymbolAndPosition) {
  Vocab vocab = Vocab::from_text(U"小丁拿着红色的苹果。");
  EXPECT_EQ(input_error_of([&] { vocab.encode(U"小丁拿着蓝色的苹果。", "--prompt"); }),
            "--prompt: symbol \"蓝\" (U+84DD) at position 4 is not in the vocabulary of 10 symbols");
  // A control character is named by its code point only, keeping the message on one line.
  EXPECT_EQ(input_error_of([&] { vocab.encode(U"小丁\n", "text.txt"); }),
            "text.txt: symbol U+000A at position 2 is not in the vocabulary of 10 symbols");
}

// ---------------------------------------------------------------- corpus and split

TEST(Corpus, SplitsHeadForTrainingAndTailForValidation) {
  TempDir dir;
  // 105 symbols over 3 distinct: floor(0.9 * 105) = floor(94.5) = 94 train, 11 validation.
  std::u32string text;
  for (int i = 0; i < 105; ++i) text.push_back(U"甲乙\n"[i % 3]);
  const fs::path path = dir.write("c.txt", encode_utf8(text));
  Corpus corpus = load_corpus(path, 0.1, 8);
  EXPECT_EQ(corpus.symbols, 105);
  EXPECT_EQ(corpus.vocab.symbols(), (std::vector<std::string>{"\n", "乙", "甲"}));
  ASSERT_EQ(corpus.train.size(), 94);
  ASSERT_EQ(corpus.val.size(), 11);
  const std::vector<int32_t> all = corpus.vocab.encode(text, "t");
  EXPECT_EQ(corpus.train.to_vector(), std::vector<int32_t>(all.begin(), all.begin() + 94));
  EXPECT_EQ(corpus.val.to_vector(), std::vector<int32_t>(all.begin() + 94, all.end()));
  EXPECT_EQ(corpus.train.bytes_per_id(), 1);  // 3 symbols: one byte per id

  // 0.25 of 100 is exact: 75 / 25.
  const fs::path hundred = dir.write("h.txt", std::string(99, 'x') + "\n");
  Corpus quarter = load_corpus(hundred, 0.25, 8);
  EXPECT_EQ(quarter.train.size(), 75);
  EXPECT_EQ(quarter.val.size(), 25);
}

TEST(Corpus, ShortSplitNamesValFractionBlockSizeAndLengths) {
  TempDir dir;
  const fs::path path = dir.write("c.txt", std::string(99, 'x') + "\n");
  const std::string message = input_error_of([&] { load_corpus(path, 0.1, 10); });
  EXPECT_EQ(message, "corpus " + path.string() +
                         ": data.val_fraction 0.1 splits its 100 symbols into 90 train and 10 validation, "
                         "but block_size 10 needs at least 11 in each");
  EXPECT_NO_THROW(load_corpus(path, 0.1, 9));  // 10 = block_size + 1 is just enough
  EXPECT_NE(input_error_of([&] { load_corpus(path, 0.95, 9); }).find("into 5 train and 95 validation"), std::string::npos);
  EXPECT_EQ(input_error_of([&] { load_corpus(path, 1.0, 9); }), "data.val_fraction must be in [0, 1), got 1");
}

TEST(Corpus, MissingEmptyOrInvalidFileNamesThePath) {
  TempDir dir;
  const fs::path missing = dir.path() / "nope.txt";
  EXPECT_EQ(input_error_of([&] { load_corpus(missing, 0.1, 8); }), "corpus " + missing.string() + " does not exist");
  const fs::path empty = dir.write("empty.txt", "");
  EXPECT_EQ(input_error_of([&] { load_corpus(empty, 0.1, 8); }), "corpus " + empty.string() + " is empty");
  const fs::path bad = dir.write("bad.txt", "小丁\xFF");
  EXPECT_EQ(input_error_of([&] { load_corpus(bad, 0.1, 8); }),
            bad.string() + ": invalid UTF-8 at byte offset 6 (code point above U+10FFFF)");
  EXPECT_EQ(input_error_of([&] { load_corpus(dir.path(), 0.1, 8); }),
            "corpus " + dir.path().string() + " is a directory, expected a text file");
}

// The corpus is read in 1 MB pieces; symbols that straddle a piece boundary, and an
// invalid byte past the first piece, must come out as a whole-file decode gives them.
TEST(Corpus, StreamedLoadEqualsWholeFileDecodeAcrossPieceBoundaries) {
  TempDir dir;
  std::string bytes;
  // 3-byte and 4-byte symbols mixed with ASCII: 1 MB = 2^20 is no multiple of 3 or 7,
  // so symbols straddle the piece boundaries.
  const std::vector<std::string> symbols = {"小", "丁", "a", "\xF0\x9F\x98\x80", "\n", "é"};
  for (size_t i = 0; bytes.size() < (size_t(5) << 19); ++i) bytes += symbols[(i * 7 + i / 5) % symbols.size()];
  const fs::path path = dir.write("big.txt", bytes);
  const Corpus corpus = load_corpus(path, 0.1, 8);
  const std::u32string text = decode_utf8(bytes, "whole");
  ASSERT_EQ(corpus.symbols, static_cast<int64_t>(text.size()));
  EXPECT_EQ(corpus.vocab.symbols(), Vocab::from_text(text).symbols());
  std::vector<int32_t> streamed = corpus.train.to_vector(), tail = corpus.val.to_vector();
  streamed.insert(streamed.end(), tail.begin(), tail.end());
  EXPECT_EQ(streamed, corpus.vocab.encode(text, "whole"));

  // A stray continuation byte 1.5 MB in, at a symbol boundary: its offset counts from the
  // start of the file, not from the piece that holds it.
  size_t at = size_t(3) << 19;
  while (static_cast<unsigned char>(bytes[at]) >= 0x80) ++at;  // an ASCII byte starts a symbol
  std::string broken = bytes;
  broken.insert(at, "\x80");
  const fs::path bad = dir.write("bad.txt", broken);
  EXPECT_EQ(input_error_of([&] { load_corpus(bad, 0.1, 8); }),
            bad.string() + ": invalid UTF-8 at byte offset " + std::to_string(at) + " (unexpected continuation byte)");
}

TEST(Utf8, ChunkedDecodeSplitAnywhereEqualsWholeDecode) {
  const std::string bytes = "a\xC3\xA9\xE5\xB0\x8F\xF0\x9F\x98\x80z";  // a é 小 😀 z
  const std::u32string whole = decode_utf8(bytes, "t");
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    std::u32string out;
    const size_t used = decode_utf8_chunk(std::string_view(bytes).substr(0, cut), 0, true, "t", out);
    EXPECT_LE(cut - used, 3u) << cut;  // at most an unfinished sequence is held back
    decode_utf8_chunk(std::string_view(bytes).substr(used), used, false, "t", out);
    EXPECT_EQ(out, whole) << cut;
  }
  // Offsets in errors count from base_offset; a cut-short sequence is an error only at the end.
  std::u32string out;
  EXPECT_EQ(input_error_of([&] { decode_utf8_chunk("ab\xFF", 1000, true, "f", out); }),
            "f: invalid UTF-8 at byte offset 1002 (code point above U+10FFFF)");
  EXPECT_EQ(decode_utf8_chunk("ab\xE5\xB0", 0, true, "f", out), 2u);
  EXPECT_EQ(input_error_of([&] { decode_utf8_chunk("ab\xE5\xB0", 7, false, "f", out); }),
            "f: invalid UTF-8 at byte offset 9 (truncated sequence)");
}

TEST(TokenIds, UsesTheNarrowestWidthAndSlicesShareStorage) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 1000; ++i) ids.push_back((i * 37) % 1000);
  for (auto [vocab_size, width] : {std::pair<int64_t, int>{256, 1}, {1000, 2}, {65536, 2}, {65537, 4}}) {
    std::vector<int32_t> fitting = ids;
    for (int32_t& id : fitting) id %= static_cast<int32_t>(std::min<int64_t>(vocab_size, 1000));
    TokenIds t = TokenIds::from_ids(fitting, vocab_size);
    EXPECT_EQ(t.bytes_per_id(), width) << vocab_size;
    EXPECT_EQ(t.to_vector(), fitting);
    TokenIds middle = t.slice(100, 50);
    ASSERT_EQ(middle.size(), 50);
    EXPECT_EQ(middle[0], fitting[100]);
    std::vector<int32_t> window(5);
    middle.copy_to(45, window);
    EXPECT_EQ(window, std::vector<int32_t>(fitting.begin() + 145, fitting.begin() + 150));
  }
  // Writing into the full sequence shows through a slice taken before: one buffer.
  TokenIds all(10, 300);
  TokenIds tail = all.slice(5, 5);
  const std::vector<int32_t> piece = {299, 7};
  all.assign(6, piece);
  EXPECT_EQ(tail.to_vector(), (std::vector<int32_t>{0, 299, 7, 0, 0}));
}

// ---------------------------------------------------------------- batch sampler

// A split whose ids are their own positions, so every window shows where it started.
std::vector<int32_t> positions(int32_t n) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = i;
  return ids;
}

TEST(BatchSampler, TargetsAreInputsShiftedByOneFromOneWindowOfTheSplit) {
  const int64_t B = 4, T = 8;
  const std::vector<int32_t> split = positions(50);
  BatchSampler sampler(split, T, B, 7);
  std::vector<int32_t> inputs(B * T), targets(B * T);
  for (int draw = 0; draw < 20; ++draw) {
    sampler.next(inputs, targets);
    for (int64_t b = 0; b < B; ++b) {
      const int32_t start = inputs[b * T];
      EXPECT_GE(start, 0);
      EXPECT_LE(start, 50 - T - 1);
      for (int64_t t = 0; t < T; ++t) {
        EXPECT_EQ(inputs[b * T + t], start + t);       // consecutive ids of the split
        EXPECT_EQ(targets[b * T + t], start + t + 1);  // the symbol that followed
      }
    }
  }
}

TEST(BatchSampler, StartsCoverZeroThroughNMinusBlockSizeMinusOne) {
  // n = T + 3 leaves exactly the starts 0, 1, 2; 200 rows hit all three and nothing else.
  const int64_t T = 5;
  BatchSampler sampler(positions(T + 3), T, 200, 3);
  std::vector<int32_t> inputs(200 * T), targets(200 * T);
  sampler.next(inputs, targets);
  std::set<int32_t> starts;
  for (int64_t b = 0; b < 200; ++b) starts.insert(inputs[b * T]);
  EXPECT_EQ(starts, (std::set<int32_t>{0, 1, 2}));
}

TEST(BatchSampler, SameSeedSameBatchesOtherSeedOtherBatches) {
  const std::vector<int32_t> split = positions(1000);
  BatchSampler a(split, 16, 8, 42), b(split, 16, 8, 42), c(split, 16, 8, 43);
  std::vector<int32_t> ia(128), ta(128), ib(128), tb(128), ic(128), tc(128);
  for (int i = 0; i < 5; ++i) {
    a.next(ia, ta);
    b.next(ib, tb);
    c.next(ic, tc);
    EXPECT_EQ(ia, ib);
    EXPECT_EQ(ta, tb);
    EXPECT_NE(ia, ic);
  }
}

TEST(BatchSampler, RestoredStateRepeatsTheSameBatchesExactly) {
  const std::vector<int32_t> split = positions(500);
  BatchSampler sampler(split, 8, 4, 11);
  std::vector<int32_t> inputs(32), targets(32);
  for (int i = 0; i < 3; ++i) sampler.next(inputs, targets);  // draw k = 3
  const std::string saved = sampler.state();
  std::vector<std::vector<int32_t>> first, again, elsewhere;
  for (int i = 0; i < 4; ++i) {  // draw m = 4
    sampler.next(inputs, targets);
    first.push_back(inputs);
    first.push_back(targets);
  }
  sampler.restore(saved);
  for (int i = 0; i < 4; ++i) {
    sampler.next(inputs, targets);
    again.push_back(inputs);
    again.push_back(targets);
  }
  EXPECT_EQ(first, again);
  // A sampler built with another seed, restored from the string, continues identically too.
  BatchSampler other(split, 8, 4, 999);
  other.restore(saved);
  for (int i = 0; i < 4; ++i) {
    other.next(inputs, targets);
    elsewhere.push_back(inputs);
    elsewhere.push_back(targets);
  }
  EXPECT_EQ(first, elsewhere);
  EXPECT_EQ(input_error_of([&] { other.restore("1,2,3"); }), "malformed random-generator state \"1,2,3\"");
}

TEST(BatchSampler, SplitShorterThanBlockSizePlusOneIsAnInputError) {
  EXPECT_EQ(input_error_of([] { BatchSampler(positions(8), 8, 2, 1); }),
            "a split of 8 symbols is shorter than block_size + 1 = 9");
  EXPECT_NO_THROW(BatchSampler(positions(9), 8, 2, 1));
}

// ---------------------------------------------------------------- probe set

TEST(ProbeSet, LoadsItemsAndSkipsBlankLines) {
  TempDir dir;
  const fs::path path = dir.write(
      "p.jsonl",
      "{\"answer\": \"丁\", \"kind\": \"who\", \"prompt\": \"小丁拿着红色的苹果。谁拿着红色的苹果？小\"}\n"
      "\n"
      "{\"prompt\": \"小丁拿着红色的苹果。小丁的苹果是什么颜色？\", \"answer\": \"红\", "
      "\"kind\": \"colour\", \"x\": 1}\n");
  std::vector<ProbeItem> items = load_probe_set(path);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].prompt, U"小丁拿着红色的苹果。谁拿着红色的苹果？小");
  EXPECT_EQ(items[0].answer, U'丁');
  EXPECT_EQ(items[0].kind, "who");
  EXPECT_EQ(items[1].answer, U'红');
  EXPECT_EQ(items[1].kind, "colour");
}

TEST(ProbeSet, KindsAreEchoedWithoutControlCharacters) {
  // train, eval and inspect-heads print the kinds on stdout: an escape sequence, a newline
  // or a C1 CSI from the file must not reach a terminal.
  TempDir dir;
  const fs::path path = dir.write("p.jsonl", "{\"answer\": \"a\", \"kind\": \"\\u001b[2Jred\\n\\u009bx\", \"prompt\": \"ab\"}\n");
  EXPECT_EQ(load_probe_set(path).at(0).kind, "?[2Jred??x");
}

TEST(ProbeSet, ErrorsNameFileAndLine) {
  TempDir dir;
  const std::string good = "{\"answer\": \"a\", \"kind\": \"who\", \"prompt\": \"xy\"}\n";
  auto error_for = [&](const std::string& third_line) {
    const fs::path path = dir.write("p.jsonl", good + "\n" + third_line + "\n");
    return input_error_of([&] { load_probe_set(path); });
  };
  const std::string where = (dir.path() / "p.jsonl").string() + ":3: ";
  EXPECT_EQ(error_for("{\"answer\": \"ab\", \"kind\": \"who\", \"prompt\": \"xy\"}"),
            where + "\"answer\" has 2 symbols, expected exactly 1");
  EXPECT_EQ(error_for("{\"answer\": \"a\", \"kind\": \"who\"}"), where + "missing key \"prompt\"");
  EXPECT_EQ(error_for("{\"answer\": \"a\", \"kind\": 3, \"prompt\": \"xy\"}"), where + "\"kind\" must be a string, found 3");
  EXPECT_EQ(error_for("{\"answer\": \"a\", \"kind\": \"who\", \"prompt\": \"\"}"), where + "\"prompt\" is empty");
  EXPECT_EQ(error_for("[1, 2]"), where + "expected a JSON object, found [1,2]");
  EXPECT_EQ(error_for("{\"answer\": ").rfind(where + "invalid JSON at line 1 column ", 0), 0u);

  const fs::path empty = dir.write("e.jsonl", "\n\n");
  EXPECT_EQ(input_error_of([&] { load_probe_set(empty); }), "probe set " + empty.string() + " holds no items");
  const fs::path missing = dir.path() / "none.jsonl";
  EXPECT_EQ(input_error_of([&] { load_probe_set(missing); }), "probe set " + missing.string() + " does not exist");
}

}  // namespace
}  // namespace mg
