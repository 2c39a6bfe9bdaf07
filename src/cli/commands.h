// The subcommands of mini-gpt. Each registers its options on the CLI11 app and returns
// the function that runs it once parsing succeeded; main() maps errors to exit codes.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace mg::cli {

using Run = std::function<int()>;  // returns the exit status

Run add_train_command(CLI::App& app);
Run add_sample_command(CLI::App& app);
Run add_inspect_heads_command(CLI::App& app);
Run add_eval_command(CLI::App& app);

// Applies --threads and --backend, shared by every command that computes.
struct ComputeOptions {
  int threads = 0;
  std::string backend;
  void add_to(CLI::App& command);
  void apply() const;
};

// Exit statuses (SPEC section 4).
inline constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitInterrupted = 130;

}  // namespace mg::cli
