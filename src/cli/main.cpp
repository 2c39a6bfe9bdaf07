// mini-gpt's entry point: parse the command line, run one subcommand, and turn every
// error into one line "mini-gpt: error: ..." with the exit status of docs/cli.md:
// 0 success, 2 bad usage/config/input, 1 any other failure (a failed write to stdout
// included), 130 after Ctrl-C, 143 after SIGTERM (train finishes its step first).
// Started by mpirun, every rank runs this same main; an error on any rank ends the whole
// job (MPI_Abort), since its peers may be waiting for it inside a collective.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>
#include <vector>

#include "cli/commands.h"
#include "distributed/communicator.h"
#include "io/atomic_file.h"
#include "io/config.h"
#include "kernels/cpu_variant.h"
#include "kernels/gemm.h"
#include "kernels/runtime.h"
#include "request/arguments.h"
#include "core/error.h"

#ifndef MINI_GPT_VERSION
#define MINI_GPT_VERSION "dev"
#endif

namespace mg::cli {

void ComputeOptions::add_to(CLI::App& command) {
  command
      .add_option("--threads", threads,
                  "Threads for the kernels (0: OMP_NUM_THREADS if set, else all cores; default " + std::to_string(threads) + ")")
      ->check(integer_in(0, kMaxThreads));
  command.add_option("--backend", backend, "GEMM backend: openblas, onednn or reference (default: " +
                                               std::string(backend_name(default_gemm_backend())) + ")");
}

std::string kernels_description() {
  std::string runs;
  for (mg::CpuVariant v : mg::supported_cpu_variants()) runs += (runs.empty() ? "" : ", ") + std::string(mg::cpu_variant_name(v));
  return "kernels: " + std::string(mg::cpu_variant_name(mg::cpu_variant())) + " (this CPU runs " + runs +
         "; MINI_GPT_KERNELS chooses)";
}

// sample, eval and inspect-heads are short: left to choose (--threads 0), they use the
// cores that no other task is running on as they start, since a team of threads with a
// member on a busy core waits for it at every barrier (training measures instead:
// train/threads.h).
void ComputeOptions::apply() const {
  set_num_threads(threads != 0 ? threads : std::min(default_num_threads(), free_cores()));
  set_gemm_backend(backend.empty() ? default_gemm_backend() : parse_gemm_backend(backend));
  warn_if_openblas_runs_old_kernels();
}

void warn_if_openblas_runs_old_kernels() {
  if (mg::gemm_backend() != mg::GemmBackend::openblas) return;
  const std::string core = mg::openblas_core();
  const std::string better = mg::openblas_core_to_set(core, mg::best_cpu_variant());
  if (better.empty()) return;
  std::cerr << "mini-gpt: warning: OpenBLAS runs its " << core
            << " kernels on this CPU (it does not know the model); OPENBLAS_CORETYPE=" << better
            << " in the environment runs its " << (better == "SkylakeX" ? "AVX-512" : "AVX2")
            << " ones, several times faster (or use --backend onednn)" << std::endl;
}

namespace {

// Every signal whose default action ends the process (Ctrl-C, SIGTERM, a hang-up, SIGQUIT,
// SIGUSR1, SIGALRM, a CPU or file-size limit, the real-time signals, and the faults) ends it
// as that default action would (exit 128 + N, a core where the default dumps one), after
// unlinking the temporary of a file being written (io/atomic_file.h), so that no
// ".NAME.tmp.PID" is left. train installs its own handlers for SIGINT and SIGTERM (and
// SIGUSR1 under MPI), which finish the step first. A signal the parent ignores (`nohup`, a
// background job of a script) stays ignored, and one that already has a handler (a
// sanitizer's for the faults) keeps it.
extern "C" void on_stop_signal(int signal_number) {
  mg::remove_pending_temporary();
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

std::vector<int> terminating_signals() {
  std::vector<int> signals = {SIGHUP,  SIGINT,  SIGQUIT,   SIGILL,  SIGTRAP,   SIGABRT, SIGBUS,  SIGFPE,
                              SIGUSR1, SIGSEGV, SIGUSR2,   SIGALRM, SIGTERM,   SIGSTKFLT, SIGXCPU, SIGXFSZ,
                              SIGVTALRM, SIGPROF, SIGPOLL, SIGPWR,  SIGSYS};
  for (int n = SIGRTMIN; n <= SIGRTMAX; ++n) signals.push_back(n);
  return signals;
}

// A reader that closes the pipe (`mini-gpt sample | head -c 1`) makes the next write fail
// with EPIPE instead of killing the process without a word: the write is then reported
// as any failed write to stdout is, one line and exit 1 (docs/cli.md).
void install_signal_handlers() {
  for (int signal_number : terminating_signals()) {
    struct sigaction old {};
    if (::sigaction(signal_number, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;  // ignored, or handled already
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    // A fault inside the handler itself (or a second signal) ends the process at once.
    action.sa_flags = SA_RESETHAND | SA_NODEFER;
    ::sigaction(signal_number, &action, nullptr);
  }
  ::signal(SIGPIPE, SIG_IGN);
}

// Seconds a collective may wait for the other ranks before the job is declared broken.
constexpr double kDefaultMpiTimeoutS = 600.0;

// In a job of several ranks the line names the rank that failed. Messages may quote what
// the user handed over: error_text (core/error.h) shows control characters as '?' and
// cuts long values, so that the error stays one short line. The line goes out in one
// write, so that lines of ranks failing at once (mpirun merges their stderr) do not mix.
int fail(const std::string& message, int status) {
  const mg::Communicator& world = mg::world_communicator();
  std::string line = "mini-gpt: error: ";
  if (world.size() > 1) line += "rank " + std::to_string(world.rank()) + " of " + std::to_string(world.size()) + ": ";
  line += mg::error_text(message) + "\n";
  std::cerr.flush();
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n > 0) done += static_cast<size_t>(n);
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  // The reason is out. Under mpirun, a rank that failed first makes the launcher SIGTERM
  // the others while they finish: that stops this process without a second line (the
  // handler's "terminated by the MPI launcher" would blame another rank for our error).
  if (world.size() > 1) std::signal(SIGTERM, SIG_DFL);
  return status;
}

// Set when the error was one every rank reported together (JobWideInputError): the job
// then ends through MPI_Finalize on every rank, not MPI_Abort.
bool failed_on_every_rank = false;

// Started with stdin, stdout or stderr closed (`>&-`), the first file we open would take
// that descriptor, and printf would write into a checkpoint. Each closed one gets
// /dev/null opened read-only: writes to it then fail (EBADF) and are reported, and the
// number is no longer free.
void hold_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", O_RDONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

double mpi_timeout_seconds() {
  const char* text = std::getenv("MINI_GPT_MPI_TIMEOUT");
  if (text == nullptr) return kDefaultMpiTimeoutS;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return end != text && *end == '\0' && seconds > 0 ? seconds : kDefaultMpiTimeoutS;
}

// MINI_GPT_KERNELS=baseline|avx2|avx512 forces a CPU variant of the element-wise kernels
// (kernels/cpu_variant.h), to compare them or to rule one out; unset, the best this CPU
// runs is used.
void choose_cpu_variant() {
  const char* name = std::getenv("MINI_GPT_KERNELS");
  if (name != nullptr && *name != '\0') {
    try {
      mg::set_cpu_variant(mg::parse_cpu_variant(name));
    } catch (const mg::InputError& e) {
      throw mg::InputError(std::string("MINI_GPT_KERNELS: ") + e.what());
    }
  }
}

int run(int argc, char** argv);

}  // namespace
}  // namespace mg::cli

int main(int argc, char** argv) {
  using namespace mg::cli;
  hold_standard_descriptors();
  install_signal_handlers();
  std::optional<mg::DistributedSession> session;
  try {
    choose_cpu_variant();
    session.emplace(mpi_timeout_seconds());
  } catch (const mg::ArgumentError& e) {  // a job's argument, named here by its option
    return fail(option_name(e.argument()) + e.detail(), kExitUsage);
  } catch (const mg::InputError& e) {
    return fail(e.what(), kExitUsage);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitFailure);
  }
  int status = run(argc, argv);
  // Everything printed must have reached stdout: a full disk or a closed descriptor
  // is a failure, not a silent success.
  if (status == kExitOk || status == kExitInterrupted || status == kExitTerminated) {
    try {
      check_standard_output();
    } catch (const mg::Error& e) {
      status = fail(e.what(), kExitFailure);
    }
  }
  // A failed rank takes the job down with it; success (every rank got here), the
  // job-wide Ctrl-C stop and an error every rank reported (JobWideInputError) end
  // through MPI_Finalize in the session's destructor.
  if (status != kExitOk && status != kExitInterrupted && status != kExitTerminated && !failed_on_every_rank)
    return session->abort_job(status);
  return status;
}

namespace mg::cli {
namespace {

int run(int argc, char** argv) {
  CLI::App app{"mini-gpt: train a tiny character-level GPT from scratch, sample from it, and see what each "
               "attention head reads.",
               "mini-gpt"};
  app.set_version_flag("--version", [] { return "mini-gpt " MINI_GPT_VERSION "\n" + kernels_description(); });
  app.require_subcommand(1);
  app.fallthrough(false);
  Run train = add_train_command(app);
  Run sample = add_sample_command(app);
  Run inspect = add_inspect_heads_command(app);
  Run eval = add_eval_command(app);
  Run serve = add_serve_command(app);
  Run lesson = add_lesson_command(app);

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
      if (name == "serve") return serve();
      if (name == "lesson") return lesson();
    }
    return fail("no subcommand given", kExitUsage);
  } catch (const mg::JobWideInputError& e) {
    failed_on_every_rank = true;
    return fail(e.what(), kExitUsage);
  } catch (const mg::RequestError& e) {  // a request's arguments, named here by their options
    return fail(e.message(mg::Spelling::command_line), kExitUsage);
  } catch (const mg::ArgumentError& e) {  // a job's argument, named here by its option
    return fail(option_name(e.argument()) + e.detail(), kExitUsage);
  } catch (const mg::InputError& e) {
    return fail(e.what(), kExitUsage);
  } catch (const CLI::ParseError& e) {  // validation done after parsing (mutually exclusive options)
    return fail(e.what(), kExitUsage);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", kExitFailure);
  } catch (const nlohmann::json::exception& e) {
    // Inputs are checked before nlohmann sees them; one that slipped through is a bug in
    // mini-gpt, reported without nlohmann's "[json.exception.type_error.316]" tag.
    std::string what = e.what();
    if (const size_t bracket = what.find("] "); what.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
      what = what.substr(bracket + 2);
    return fail("internal error while handling JSON: " + what, kExitFailure);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitFailure);
  }
}

}  // namespace
}  // namespace mg::cli
