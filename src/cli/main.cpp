// mini-gpt's entry point: parse the command line, run one subcommand, and turn every
// error into one line "mini-gpt: error: ..." with the SPEC's exit status:
// 0 success, 2 bad usage/config/input, 1 any other failure, 130 after Ctrl-C.
// Started by mpirun, every rank runs this same main; an error on any rank ends the whole
// job (MPI_Abort), since its peers may be waiting for it inside a collective.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>

#include "cli/commands.h"
#include "dist/communicator.h"
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

// Seconds a collective may wait for the other ranks before the job is declared broken.
constexpr double kDefaultMpiTimeoutS = 600.0;

// In a job of several ranks the line names the rank that failed.
int fail(const std::string& message, int status) {
  const mg::Communicator& world = mg::world_communicator();
  std::cerr << "mini-gpt: error: ";
  if (world.size() > 1) std::cerr << "rank " << world.rank() << " of " << world.size() << ": ";
  std::cerr << message << std::endl;
  return status;
}

double mpi_timeout_seconds() {
  const char* text = std::getenv("MINI_GPT_MPI_TIMEOUT");
  if (text == nullptr) return kDefaultMpiTimeoutS;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return end != text && *end == '\0' && seconds > 0 ? seconds : kDefaultMpiTimeoutS;
}

int run(int argc, char** argv);

}  // namespace
}  // namespace mg::cli

int main(int argc, char** argv) {
  using namespace mg::cli;
  std::optional<mg::DistributedSession> session;
  try {
    session.emplace(mpi_timeout_seconds());
  } catch (const mg::InputError& e) {
    return fail(e.what(), kExitUsage);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitFailure);
  }
  const int status = run(argc, argv);
  // A failed rank takes the job down with it; success (every rank got here) and the
  // job-wide Ctrl-C stop end through MPI_Finalize in the session's destructor.
  if (status != kExitOk && status != kExitInterrupted) return session->abort_job(status);
  return status;
}

namespace mg::cli {
namespace {

int run(int argc, char** argv) {
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

}  // namespace
}  // namespace mg::cli
