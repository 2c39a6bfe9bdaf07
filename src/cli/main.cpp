// mini-gpt's entry point: parse the command line, run one subcommand, and turn every
// error into one line "mini-gpt: error: ..." with the SPEC's exit status:
// 0 success, 2 bad usage/config/input, 1 any other failure, 130 after Ctrl-C.
#include <cstdio>
#include <iostream>
#include <new>

#include "cli/commands.h"
#include "kernels/runtime.h"
#include "tensor/error.h"

#ifndef MINI_GPT_VERSION
#define MINI_GPT_VERSION "dev"
#endif

namespace mg::cli {

void ComputeOptions::add_to(CLI::App& command) {
  command
      .add_option("--threads", threads,
                  "Threads for the kernels (0: all cores; default " + std::to_string(threads) + ")")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--backend", backend, "GEMM backend: openblas, onednn or reference (default: " +
                                               std::string(backend_name(default_gemm_backend())) + ")");
}

void ComputeOptions::apply() const {
  set_num_threads(threads);
  set_gemm_backend(backend.empty() ? default_gemm_backend() : parse_gemm_backend(backend));
}

namespace {

int fail(const std::string& message, int status) {
  std::cerr << "mini-gpt: error: " << message << std::endl;
  return status;
}

}  // namespace
}  // namespace mg::cli

int main(int argc, char** argv) {
  using namespace mg::cli;
  CLI::App app{"mini-gpt: train a tiny character-level GPT from scratch, sample from it, and see what each "
               "attention head reads.",
               "mini-gpt"};
  app.set_version_flag("--version", "mini-gpt " MINI_GPT_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  Run train = add_train_command(app);
  Run sample = add_sample_command(app);
  Run inspect = add_inspect_heads_command(app);
  Run eval = add_eval_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(e.what(), kExitUsage);
  }

  try {
    for (auto* sub : app.get_subcommands()) {
      const std::string name = sub->get_name();
      if (name == "train") return train();
      if (name == "sample") return sample();
      if (name == "inspect-heads") return inspect();
      if (name == "eval") return eval();
    }
    return fail("no subcommand given", kExitUsage);
  } catch (const mg::InputError& e) {
    return fail(e.what(), kExitUsage);
  } catch (const CLI::ParseError& e) {  // validation done after parsing (mutually exclusive options)
    return fail(e.what(), kExitUsage);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", kExitFailure);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitFailure);
  }
}
