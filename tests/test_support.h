// Helpers shared by the tests that train or run the mini-gpt binary.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/config.h"
#include "nn/gpt.h"

namespace mg::test {

inline std::filesystem::path source_dir() { return MINI_GPT_SOURCE_DIR; }

// A fresh, empty folder under the system temp dir, unique to this test.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("mini-gpt-test-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// configs/tiny.json with the run directory moved into `dir`.
inline Config tiny_config(const std::filesystem::path& dir) {
  Config c = load_config(source_dir() / "configs" / "tiny.json");
  c.train.out_dir = dir.string();
  return c;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A model config with the SPEC defaults for every key not given.
inline ModelConfig config_of(int64_t n_layer, int64_t n_embd, int64_t n_head, int64_t block_size, int64_t vocab_size,
                             const std::string& position) {
  ModelConfig c;
  c.n_layer = n_layer;
  c.n_embd = n_embd;
  c.n_head = n_head;
  c.block_size = block_size;
  c.vocab_size = vocab_size;
  c.position = position;
  return c;
}

// A small model (2 heads) with SPEC initialisation drawn from `seed`.
inline Gpt small_model(int64_t n_layer, int64_t n_embd, int64_t block_size, int64_t vocab_size, uint64_t seed,
                       const std::string& position = "rope") {
  Gpt model(config_of(n_layer, n_embd, ModelConfig{}.n_head, block_size, vocab_size, position));
  Rng rng(seed);
  model.initialize(rng);
  return model;
}

struct CommandResult {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

// Runs the mini-gpt binary with arguments (no shell quoting issues: each is quoted).
inline CommandResult run_mini_gpt(const std::vector<std::string>& args, const std::filesystem::path& scratch) {
  std::string command = std::string("'") + MINI_GPT_BINARY + "'";
  for (const auto& a : args) {
    std::string quoted = "'";
    for (char c : a) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    command += " " + quoted + "'";
  }
  const auto out = scratch / "stdout.txt", err = scratch / "stderr.txt";
  command += " >'" + out.string() + "' 2>'" + err.string() + "' </dev/null";
  int raw = std::system(command.c_str());
  CommandResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

}  // namespace mg::test
