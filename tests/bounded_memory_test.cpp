// Bounded memory. (1) A corpus loads in little more than its compact ids: a 24 MB ASCII
// file is loaded in a forked child whose address space may grow by only 24 MB of ids plus
// 40 MB of slack (RLIMIT_AS), which the old whole-file loader (bytes + code points + int32
// ids + split copies, ~10x the file) could not meet. (2) The training memory estimate
// counts exactly the parameters expected_parameter_shapes lists, accepts the default
// config and refuses a huge one with both figures in one line.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "data/corpus.h"
#include "io/memory_budget.h"
#include "model_spec/parameter_shapes.h"
#include "core/error.h"
#include "tensor/tensor.h"
#include "config_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace mg;

namespace {

uint64_t address_space_bytes() {
  long pages = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Runs fn() in a child whose address space may grow by `budget` bytes; returns its exit
// status (0: fn returned true), or 128 + signal.
template <class Fn>
int run_with_address_space_budget(uint64_t budget, Fn&& fn) {
  const pid_t child = ::fork();
  if (child == 0) {
    const uint64_t limit = address_space_bytes() + budget;
    const rlimit cap{limit, limit};
    ::setrlimit(RLIMIT_AS, &cap);
    ::alarm(60);
    bool ok = false;
    try {
      ok = fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST(BoundedMemoryTest, CorpusLoadsWithinItsCompactIdsPlusFixedSlack) {
  const fs::path dir = test::fresh_dir("bounded-corpus");
  const fs::path path = dir / "big.txt";
  const int64_t bytes = int64_t(24) << 20;
  {
    std::string line = "the quick brown fox jumps over the lazy dog, said Tom. 0123456789\n";
    std::ofstream out(path, std::ios::binary);
    for (int64_t written = 0; written < bytes; written += static_cast<int64_t>(line.size())) out << line;
  }
  const int64_t symbols = static_cast<int64_t>(fs::file_size(path));  // ASCII: one byte, one symbol
  const uint64_t slack = uint64_t(40) << 20;

  // The guard bites: a vector of the corpus as int32 ids alone (4 bytes per symbol) would not fit.
  EXPECT_NE(run_with_address_space_budget(static_cast<uint64_t>(symbols) + slack,
                                          [&] { return std::vector<int32_t>(static_cast<size_t>(symbols), 1)[7] == 1; }),
            0);
  // The corpus does: one byte per id, shared by both splits.
  EXPECT_EQ(run_with_address_space_budget(static_cast<uint64_t>(symbols) + slack,
                                          [&] {
                                            const Corpus corpus = load_corpus(path, 0.1, 64);
                                            return corpus.symbols == symbols && corpus.train.bytes_per_id() == 1 &&
                                                   corpus.train.size() + corpus.val.size() == symbols;
                                          }),
            0);
  fs::remove_all(dir);
}

// A second implementation of the parameter count: docs/checkpoint.md's tensor list, summed.
TEST(BoundedMemoryTest, EstimateCountsExactlyTheSpecParameters) {
  for (const std::string position : {"rope", "learned"}) {
    for (auto [layers, width, ratio] : {std::tuple{1, 8, 4}, {4, 64, 4}, {3, 48, 2}}) {
      Config config;
      config.model.n_layer = layers;
      config.model.n_embd = width;
      config.model.mlp_ratio = ratio;
      config.model.position = parse_position(position).value();
      config.model.vocab_size = 79;
      int64_t expected = 0;
      for (const auto& [name, shape] : expected_parameter_shapes(config.model)) expected += shape_numel(shape);
      EXPECT_EQ(estimate_training_memory(config).parameters, static_cast<double>(expected))
          << position << " " << layers << "x" << width;
      EXPECT_EQ(estimate_training_memory(config).parameter_bytes, 16.0 * static_cast<double>(expected));
    }
  }
}

TEST(BoundedMemoryTest, DefaultConfigFitsAndAHugeModelIsRefusedWithBothFigures) {
  Config config;  // docs/config.md's defaults
  const uint64_t machine = physical_memory_bytes();
  EXPECT_GT(machine, uint64_t(64) << 20);
  EXPECT_NO_THROW(check_training_memory(config));
  EXPECT_NO_THROW(check_training_memory(test::tiny_config(fs::temp_directory_path())));
  // The activations grow with batch_size x block_size, so a larger batch costs more.
  Config bigger_batch = config;
  bigger_batch.train.batch_size *= 2;
  EXPECT_GT(estimate_training_memory(bigger_batch).activation_bytes, estimate_training_memory(config).activation_bytes);

  Config huge = config;
  huge.model.n_embd = 65536;
  huge.model.n_layer = 512;
  try {
    check_training_memory(huge);
    ADD_FAILURE() << "a 2.6e13-parameter model was accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos);
    EXPECT_NE(message.find("needs about " + format_bytes(estimate_training_memory(huge).total_bytes())),
              std::string::npos) << message;
    EXPECT_NE(message.find("this machine has " + format_bytes(static_cast<double>(machine))), std::string::npos)
        << message;
    EXPECT_NE(message.find("2.64e+13 parameters"), std::string::npos) << message;
  }
  // The threshold is the figure itself.
  const double need = estimate_training_memory(config).total_bytes();
  EXPECT_NO_THROW(check_training_memory(config, static_cast<uint64_t>(need) + 1));
  EXPECT_THROW(check_training_memory(config, static_cast<uint64_t>(need) - 1), InputError);
}

TEST(BoundedMemoryTest, FormatBytesPicksTheUnit) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(1536), "1.5 KB");
  EXPECT_EQ(format_bytes(3.0 * (1 << 30)), "3.0 GB");
}
