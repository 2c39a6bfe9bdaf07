// The subcommands of mini-gpt. Each registers its options on the CLI11 app and returns
// the function that runs it once parsing succeeded; main() maps errors to exit codes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace mg::cli {

using Run = std::function<int()>;  // returns the exit status

Run add_train_command(CLI::App& app);
Run add_sample_command(CLI::App& app);
Run add_inspect_heads_command(CLI::App& app);
Run add_eval_command(CLI::App& app);
Run add_serve_command(CLI::App& app);
Run add_lesson_command(CLI::App& app);

// Applies --threads and --backend, shared by every command that computes.
struct ComputeOptions {
  int threads = 0;
  std::string backend;
  void add_to(CLI::App& command);
  void apply() const;  // and warn_if_openblas_runs_old_kernels
};

// With the OpenBLAS backend in force, one line on stderr when OpenBLAS took this CPU for an
// older one and runs kernels without AVX2 (openblas_core_to_set, kernels/gemm.h).
void warn_if_openblas_runs_old_kernels();

// "kernels: avx512 (this CPU runs baseline, avx2, avx512; ...), GEMM backend ...": which
// build of the kernels runs, for --version and the first line of train.
std::string kernels_description();

// Exit statuses (docs/cli.md, "Rules every command follows"). SIGTERM stops training as
// Ctrl-C does, exiting 128 + 15.
inline constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitInterrupted = 130, kExitTerminated = 143;

// Validators that parse the option's text without wrapping and state their bound plainly:
// "--threads: must be an integer in [0, 256], found \"300\"" (options.cpp).
CLI::Validator integer_in(int64_t lo, int64_t hi);
CLI::Validator unsigned_64();  // a seed: [0, 2^64)

// The option that carries a job's argument (ArgumentError): "top_k" is --top-k; a name
// that is already an option ("--layer") stays as it is.
std::string option_name(const std::string& argument);

// Flushes stdout and throws IoError when any write to it failed (a full disk, /dev/full,
// a closed descriptor): output that was lost is a failure, not a success.
void check_standard_output();

}  // namespace mg::cli
