// The library's rules against hostile input (issue 19), each where it lives: bounded,
// non-blocking reads of regular files only (data/text_file.h); JSON nesting and NUL
// bytes refused before parsing (data/json_limits.h); the atomic writer that never replaces a
// device, FIFO, symlink or folder (io/atomic_file.h); the run-directory lock
// (io/dir_lock.h); the whole config validated once after every override, with thread
// and count bounds and strings free of NUL and invalid UTF-8 (io/config.h); non-finite
// weights refused on load (io/checkpoint.h). tests/hostile_test.sh drives the binary.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "data/probe.h"
#include "data/text_file.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "io/dir_lock.h"
#include "data/json_limits.h"
#include "model_spec/parameter_shapes.h"
#include "core/error.h"
#include "error_support.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using test::input_error_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class HostileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mg_hostile_io_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  fs::path fifo(const std::string& name) {
    const fs::path path = dir_ / name;
    EXPECT_EQ(::mkfifo(path.c_str(), 0644), 0);
    return path;
  }
  fs::path dir_;
};

// A FIFO with no writer would block an ordinary open forever; it is refused at once.
TEST_F(HostileIoTest, ReadsRefuseFifosDevicesAndFoldersWithoutBlocking) {
  const fs::path pipe = fifo("pipe.txt");
  EXPECT_EQ(input_error_of([&] { read_file_bytes(pipe, "text"); }), "text " + pipe.string() + " is a FIFO, expected a text file");
  EXPECT_EQ(input_error_of([&] { for_each_utf8_piece(pipe, "corpus", [](std::u32string_view) {}); }),
            "corpus " + pipe.string() + " is a FIFO, expected a text file");
  EXPECT_EQ(input_error_of([&] { read_file_bytes("/dev/zero", "prompt"); }),
            "prompt /dev/zero is a character device, expected a text file");
  EXPECT_EQ(input_error_of([&] { for_each_utf8_piece("/dev/zero", "corpus", [](std::u32string_view) {}); }),
            "corpus /dev/zero is a character device, expected a text file");
  EXPECT_EQ(input_error_of([&] { read_file_bytes(dir_, "text"); }), "text " + dir_.string() + " is a directory, expected a text file");
  EXPECT_EQ(input_error_of([&] { read_file_bytes("", "text"); }), "text: the path is empty");
}

TEST_F(HostileIoTest, WholeFileReadsAreBoundedBeforeAnythingIsRead) {
  const fs::path text = write("ten.txt", "0123456789");
  EXPECT_EQ(read_file_bytes(text, "text", 10), "0123456789");
  EXPECT_EQ(input_error_of([&] { read_file_bytes(text, "text", 9); }),
            "text " + text.string() + " is 10 bytes, more than the limit of 9");
  // A sparse file of 65 MB costs no disk and must not be read: the default bound is 64 MB.
  const fs::path big = dir_ / "big.txt";
  { std::ofstream(big) << ""; }
  fs::resize_file(big, kMaxTextFileBytes + 1);
  EXPECT_TRUE(contains(input_error_of([&] { read_utf8_file(big, "--prompt-file"); }), "more than the limit of 67108864"));
  EXPECT_TRUE(contains(input_error_of([&] { load_config(big); }), "more than the limit of 1048576"));
}

TEST(HostileJsonTest, NestingIsBoundedBeforeParsingAndNulIsRefused) {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse_json_bounded(ok).is_array());
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  EXPECT_EQ(input_error_of([&] { parse_json_bounded(deep); }), "invalid JSON at line 1 column 65: nested deeper than 64 levels");
  // Brackets inside strings are text, not nesting.
  EXPECT_EQ(parse_json_bounded("\"" + std::string(1000, '[') + "\"").get<std::string>().size(), 1000u);
  EXPECT_EQ(input_error_of([&] { parse_json_bounded(std::string("{}\0garbage", 10)); }),
            "invalid JSON at line 1 column 3: NUL byte");
  EXPECT_TRUE(contains(input_error_of([&] { parse_json_bounded("{\"a\": 1e999}"); }), "number overflow"));
}

// A probe line nested 60,000 deep parsed, then crashed while its error was formatted.
TEST_F(HostileIoTest, AProbeLineNestedDeepIsRefusedNamingTheLine) {
  const fs::path probes = write("probe.jsonl", "{\"prompt\": " + std::string(60000, '[') + std::string(60000, ']') + "}\n");
  EXPECT_EQ(input_error_of([&] { load_probe_set(probes); }),
            probes.string() + ":1: invalid JSON at line 1 column 75: nested deeper than 64 levels");
}

TEST_F(HostileIoTest, TheAtomicWriterReplacesOnlyRegularFiles) {
  const fs::path target = write("target.txt", "mine");
  fs::create_symlink(target, dir_ / "link.svg");
  fifo("pipe.svg");
  fs::create_directories(dir_ / "folder.svg");
  EXPECT_EQ(input_error_of([&] { write_text_atomically(dir_ / "link.svg", "x"); }),
            "output " + (dir_ / "link.svg").string() + " is a symbolic link; refusing to replace it with a regular file");
  EXPECT_TRUE(contains(input_error_of([&] { write_text_atomically(dir_ / "pipe.svg", "x"); }), "is a FIFO"));
  EXPECT_TRUE(contains(input_error_of([&] { write_text_atomically(dir_ / "folder.svg", "x"); }), "is a directory"));
  EXPECT_TRUE(contains(input_error_of([&] { write_text_atomically("/dev/null", "x"); }), "is a character device"));
  EXPECT_EQ(input_error_of([&] { write_text_atomically("", "x"); }), "an output path is empty, expected a file name");
  EXPECT_TRUE(contains(input_error_of([&] { write_text_atomically(dir_.string() + "/", "x"); }), "names a folder"));
  EXPECT_EQ(fs::read_symlink(dir_ / "link.svg"), target);
  EXPECT_TRUE(fs::is_fifo(dir_ / "pipe.svg"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  write_text_atomically(target, "new");
  std::ifstream in(target);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new");
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  // A missing folder is the OS's refusal, with the path and the reason.
  try {
    write_text_atomically(dir_ / "missing" / "x.svg", "x");
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot write " + (dir_ / "missing" / "x.svg").string() + ": No such file"));
  }
}

TEST_F(HostileIoTest, ASecondLockOnAFolderIsRefusedAtOnceAndReleasedWithItsHolder) {
  {
    DirectoryLock first(dir_, "run directory");
    const std::string refused = input_error_of([&] { DirectoryLock second(dir_, "run directory"); });
    EXPECT_TRUE(contains(refused, "run directory " + dir_.string() + " is in use by another mini-gpt process (pid " +
                                      std::to_string(::getpid()) + ")"))
        << refused;
  }
  DirectoryLock again(dir_, "run directory");  // the first one's close released it
  SUCCEED();
}

TEST(HostileConfigTest, OverridesAreValidatedAsAWholeSoTheirOrderNeverMatters) {
  const std::vector<std::vector<std::string>> orders = {
      {"model.n_embd=18", "model.n_head=6", "model.position=learned"},
      {"model.position=learned", "model.n_head=6", "model.n_embd=18"},
      {"model.n_head=6", "model.position=learned", "model.n_embd=18"}};
  for (const auto& order : orders) {
    Config c;
    apply_overrides(c, order, "cfg with --set");
    EXPECT_EQ(c.model.n_embd, 18);
    EXPECT_EQ(c.model.position, PositionType::learned);
  }
  for (const auto& order : std::vector<std::vector<std::string>>{{"train.lr=1e-5", "train.min_lr=1e-6"},
                                                                 {"train.min_lr=1e-6", "train.lr=1e-5"}}) {
    Config c;
    apply_overrides(c, order, "cfg with --set");
    EXPECT_EQ(c.train.min_lr, 1e-6);
  }
  // A result that is invalid in any order is refused, naming the origin, and changes nothing.
  Config c;
  EXPECT_EQ(input_error_of([&] { apply_overrides(c, {"model.n_head=6", "model.n_embd=18"}, "cfg with --set"); }),
            "cfg with --set: model.position \"rope\" needs an even head width, found n_embd / n_head = 3");
  EXPECT_EQ(config_to_json(c), config_to_json(Config{}));
}

TEST(HostileConfigTest, ThreadsAndCountsAreBoundedAndStringsAreCleanUtf8WithoutNul) {
  Config c;
  for (const char* bad : {"train.threads=257", "train.threads=4294967296", "train.threads=1e18", "train.threads=-1"})
    EXPECT_TRUE(contains(input_error_of([&] { apply_override(c, bad); }), "train.threads must be in [0, 256]")) << bad;
  EXPECT_TRUE(contains(input_error_of([&] { apply_override(c, "train.eval_batches=1e12"); }),
                       "train.eval_batches must be <= 1000000"));
  EXPECT_TRUE(contains(input_error_of([&] { apply_override(c, "train.max_steps=1e15"); }),
                       "train.max_steps must be <= 1000000000000"));
  EXPECT_TRUE(contains(input_error_of([&] { apply_override(c, "train.seed=18446744073709551616"); }),
                       "train.seed must be a non-negative integer below 2^64"));
  apply_override(c, "train.seed=18446744073709551615");
  EXPECT_EQ(c.train.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(input_error_of([&] { config_from_json({{"data", {{"path", std::string("a.txt\0/etc/passwd", 16)}}}}, "/"); })
                .rfind("config: data.path holds a NUL byte at offset 6, found \"/a.txt\\u0000/etc/", 0),
            0u);
  Config flags;
  set_config_value(flags, "train.out_dir", std::string("runs/\xff"), "--out");
  EXPECT_EQ(input_error_of([&] { validate_config(flags); }),
            "train.out_dir: invalid UTF-8 at byte offset 5 (code point above U+10FFFF)");
  // A --set value nested 60,000 deep is text to a number key, and the error quotes 80 bytes of it.
  const std::string deep = "train.lr=" + std::string(60000, '[');
  const std::string message = input_error_of([&] { apply_override(c, deep); });
  EXPECT_TRUE(contains(message, "train.lr must be a number")) << message.substr(0, 200);
  EXPECT_LT(message.size(), 300u);
}

TEST_F(HostileIoTest, NonFiniteWeightsAreRefusedOnLoadNamingTheTensor) {
  Config config;
  config.model.vocab_size = 3;
  config.model.n_layer = 1;
  config.model.n_embd = 8;
  config.model.n_head = 2;
  config.model.block_size = 4;
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, shape] : expected_parameter_shapes(config.model)) tensors.emplace_back(name, Tensor::zeros(shape));
  std::vector<std::pair<std::string, const Tensor*>> view;
  for (const auto& [name, t] : tensors) view.emplace_back(name, &t);
  const fs::path path = dir_ / "ckpt.safetensors";
  save_checkpoint(path, config, {"a", "b", "c"}, 0, view);
  EXPECT_NO_THROW(load_checkpoint(path));
  tensors[1].second[3] = std::numeric_limits<float>::quiet_NaN();
  save_checkpoint(path, config, {"a", "b", "c"}, 0, view);
  EXPECT_EQ(input_error_of([&] { load_checkpoint(path); }),
            path.string() + ": tensor " + tensors[1].first + " holds a non-finite value (nan) at element 3 of " +
                std::to_string(tensors[1].second.numel()));
  tensors[1].second[3] = -std::numeric_limits<float>::infinity();
  save_checkpoint(path, config, {"a", "b", "c"}, 0, view);
  EXPECT_TRUE(contains(input_error_of([&] { load_checkpoint(path); }), "holds a non-finite value (-inf)"));
}

// The text every error is shown as (cli/main.cpp's fail): one short line whatever it quotes.
TEST(ErrorTextTest, ControlsOfEveryKindAreQuestionMarksAndLongValuesAreCut) {
  // C0, DEL, C1 (U+0085 NEL, U+009B CSI), U+2028, U+2029, a bidi override, a stray byte.
  EXPECT_EQ(error_text("a\x1b[31mb\x7f\xc2\x85\xc2\x9b\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xae\xff."), "a?[31mb???????.");
  EXPECT_EQ(printable_text("\xc2\x9b" "2J \xe4\xb8\x81\xc2\xa0"), "?2J \xe4\xb8\x81\xc2\xa0");  // 丁 and U+00A0 are kept
  EXPECT_EQ(error_text("\xed\xa0\x80 \xc0\xaf"), "??? ??");  // a surrogate and an overlong '/' are not UTF-8
  EXPECT_EQ(error_text("found \"abc\" and a short path /tmp/x"), "found \"abc\" and a short path /tmp/x");

  const std::string value(5000, 'v');
  EXPECT_EQ(error_text("key \"" + value + "\" is bad"), "key \"" + std::string(200, 'v') + "...\" (5000 characters) is bad");
  EXPECT_EQ(error_text("cannot open /" + value + ": gone"), "cannot open /" + std::string(199, 'v') + "... (5002 characters) gone");
  const std::string wide(300, 'x');  // counted in characters, never cut inside one: 丁 is 3 bytes
  std::string chinese;
  for (int i = 0; i < 201; ++i) chinese += "\xe4\xb8\x81";
  EXPECT_EQ(error_text("\"" + chinese + "\""), "\"" + chinese.substr(0, 600) + "...\" (201 characters)");
  EXPECT_EQ(error_text("unclosed \"" + wide), "unclosed \"" + std::string(200, 'x') + "...\" (300 characters)");
  EXPECT_LT(error_text(std::string(50 << 20, 'z')).size(), 300u);  // a 50 MB value: a short line
}

}  // namespace
}  // namespace mg
