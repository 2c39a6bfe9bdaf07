// Folders, files and the mini-gpt binary for the tests: no layer of src/, so any test may
// use it. The layered helpers are beside it: config_support.h (io), model_support.h (nn).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mg::test {

inline std::filesystem::path source_dir() { return MINI_GPT_SOURCE_DIR; }

// A fresh, empty folder under the system temp dir, unique to this test.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("mini-gpt-test-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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
