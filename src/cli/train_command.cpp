// `mini-gpt train`: resolve the config (file, then flags, then --set), run the training
// job, and show its progress: a live line on a terminal, plain periodic lines otherwise.
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/head_logging.h"
#include "core/error.h"
#include "distributed/communicator.h"
#include "io/atomic_file.h"
#include "io/config.h"
#include "io/floor_record.h"
#include "report/formation_format.h"
#include "request/timeline.h"
#include "train/train.h"

namespace mg::cli {
namespace {

std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{0};  // the signal that asked to stop: SIGINT, SIGTERM or SIGUSR1

// A single process stops on Ctrl-C (SIGINT) or SIGTERM (docker stop, systemd, batch
// schedulers) alike: the step finishes, latest.safetensors is written, and the exit
// status says which (130, 143).
// A second signal ends the process at once (a run stuck before its first step, or a user
// who will not wait for the step), with the same status and latest.safetensors as it was.
extern "C" void on_sigint(int signal_number) {
  if (g_stop_requested.load()) {
    remove_pending_temporary();  // a checkpoint half written: its temporary goes
    _exit(128 + signal_number);
  }
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signal_number);
  g_stop_requested.store(true);
}

// Under mpirun, when a rank dies the launcher sends SIGTERM to the survivors (and
// SIGKILL about a second later). The survivors then say why they stop, in one line
// written from the handler (so prepared beforehand: only write(2) is safe there).
char g_terminated_message[1024];
size_t g_terminated_length = 0;

extern "C" void on_sigterm(int) {
  const ssize_t written = ::write(STDERR_FILENO, g_terminated_message, g_terminated_length);
  (void)written;
  remove_pending_temporary();
  _exit(128 + SIGTERM);
}

// Ranks of an MPI job: SIGUSR1, which mpirun forwards to every rank (`kill -USR1
// <mpirun's pid>`), stops the job as Ctrl-C stops a single process: the step finishes
// on every rank, rank 0 writes latest.safetensors, exit 130. (mpirun answers Ctrl-C
// itself by terminating the ranks at once.)
void install_mpi_signal_handlers(const Communicator& world, const std::string& run_dir) {
  const std::string message = "mini-gpt: error: rank " + std::to_string(world.rank()) + " of " +
                              std::to_string(world.size()) +
                              ": terminated by the MPI launcher (SIGTERM): another rank failed or the job was "
                              "stopped; the last checkpoint is " + run_dir + "/latest.safetensors\n";
  g_terminated_length = std::min(message.size(), sizeof g_terminated_message);
  std::memcpy(g_terminated_message, message.data(), g_terminated_length);
  std::signal(SIGTERM, on_sigterm);
  std::signal(SIGUSR1, on_sigint);
}

std::string format_duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  return buffer;
}

// Renders one progress report; on a terminal the line is redrawn in place.
class ProgressPrinter {
 public:
  ProgressPrinter() : live_(isatty(STDERR_FILENO)) {}

  void operator()(const TrainProgress& p) {
    if (first_step_ < 0) {  // the first report: say which kernels run, once training has started
      first_step_ = p.step - 1;  // a resumed run starts past 0
      // On stderr, as docs/cli.md says: stdout keeps to the run's summary.
      std::fprintf(stderr, "mini-gpt " MINI_GPT_VERSION "; %s\n", kernels_description().c_str());
      warn_if_openblas_runs_old_kernels();  // the job has set train.backend by now
    }
    if (p.val_loss) last_val_ = *p.val_loss;
    // ETA from this process's pace so far, evaluations included.
    const double eta = p.elapsed_s / static_cast<double>(p.step - first_step_) * static_cast<double>(p.max_steps - p.step);
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, "step %lld/%lld  loss %.4f  val %s  lr %.2e  %.0f tok/s  ETA %s",
                  static_cast<long long>(p.step), static_cast<long long>(p.max_steps), p.loss,
                  last_val_ < 0 ? "-" : std::to_string(last_val_).substr(0, 6).c_str(), p.lr, p.tokens_per_s,
                  format_duration(eta).c_str());
    std::string line = buffer;
    if (p.probe_accuracy) line += "  probe " + std::to_string(*p.probe_accuracy).substr(0, 5);
    if (live_) {
      std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), p.val_loss ? "\n" : "");  // keep evaluation lines
    } else if (p.val_loss || p.step == p.max_steps || p.step % 100 == 0) {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }
  void finish() {
    if (live_) std::fprintf(stderr, "\n");
  }
  // The step this process started after: 0 for a new run, the checkpoint's step for a resumed one.
  int64_t first_step() const { return first_step_ < 0 ? 0 : first_step_; }

 private:
  bool live_;
  double last_val_ = -1.0;
  int64_t first_step_ = -1;
};

struct TrainOptions {
  std::string config_file, resume;
  std::optional<std::string> out_dir;  // optional: "--out ''" is refused, not ignored
  std::optional<int64_t> max_steps;
  std::optional<uint64_t> seed;
  std::vector<std::string> sets;
  ComputeOptions compute;
  bool profile = false;
};

// A line "Key:   1234 kB" of /proc/self/status, in MB (0 where absent).
double status_mb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::strtod(line.c_str() + line.find(':') + 1, nullptr) / 1024.0;
  return 0.0;
}

// The profile table: per op family ms/step and share of the step, then the GEMMs'
// achieved GFLOP/s (their FLOPs over their own time) and the whole step's (the same
// FLOPs over the step time), and where the memory went.
void print_profile(const ProfileReport& r, const TensorPoolStats& pool, int64_t tokens_per_step) {
  const double steps = static_cast<double>(std::max<int64_t>(r.steps, 1));
  std::printf("\nprofile over %lld steps (%lld tokens each): %.2f ms/step\n", static_cast<long long>(r.steps),
              static_cast<long long>(tokens_per_step), 1e3 * r.total_seconds / steps);
  std::printf("%-10s %10s %7s %12s\n", "family", "ms/step", "share", "calls/step");
  for (int f = 0; f < kOpFamilyCount; ++f) {
    const auto& fam = r.families[f];
    std::printf("%-10s %10.3f %6.1f%% %12.1f\n", std::string(op_family_name(static_cast<OpFamily>(f))).c_str(),
                1e3 * fam.seconds / steps, r.total_seconds > 0 ? 100.0 * fam.seconds / r.total_seconds : 0.0,
                static_cast<double>(fam.calls) / steps);
  }
  const double gemm_s = r.families[static_cast<int>(OpFamily::gemm)].seconds;
  const double flops = r.gemm_flops + r.attention_flops;  // the model's products, whichever kernel ran them
  std::printf("FLOPs %.3f GFLOP/step (%.3f MFLOP/token): GEMMs %.3f, fused attention %.3f\n", flops / steps / 1e9,
              flops / steps / static_cast<double>(tokens_per_step) / 1e6, r.gemm_flops / steps / 1e9,
              r.attention_flops / steps / 1e9);
  std::printf("achieved GFLOP/s: GEMMs %.1f, whole step %.1f\n", gemm_s > 0 ? r.gemm_flops / gemm_s / 1e9 : 0.0,
              r.total_seconds > 0 ? flops / r.total_seconds / 1e9 : 0.0);
  std::printf("memory: peak RSS %.1f MB, now %.1f MB (anonymous %.1f, files %.1f); tensor pool: peak in use "
              "%.1f MB, held %.1f MB, %lld misses\n",
              status_mb("VmHWM:"), status_mb("VmRSS:"), status_mb("RssAnon:"), status_mb("RssFile:"),
              static_cast<double>(pool.peak_bytes_in_use) / (1 << 20), static_cast<double>(pool.bytes_held) / (1 << 20),
              static_cast<long long>(pool.misses));
}

// heads.html, the head explorer of the finished run, by the head logging the run was
// given (cli/head_logging.h). The run is already saved, so a failure here is a warning,
// not an error: the exit status stays 0.
void write_heads_page(const TrainResult& result, const HeadLogging& heads) {
  const std::filesystem::path run_dir = result.run_dir;
  // It scores the probe once per head (the ablation column): tens of seconds for the
  // default model, so the wait is announced (a run without a probe gets no page).
  check_standard_output();  // the summary above reached its reader (else its error, not the page's lines)
  // Announced only once the page is sure to be made (a probe whose prompts are all outside
  // the vocabulary makes none).
  const auto announce = [&] {
    std::fprintf(stderr, "writing %s (each head's role and ablation cost on the probe) ...\n",
                 printable_text((run_dir / "heads.html").string()).c_str());
  };
  try {
    if (const auto page = heads.after_run(run_dir, announce)) std::printf("head explorer %s\n", page->c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mini-gpt: warning: %s not written: %s\n", error_text((run_dir / "heads.html").string()).c_str(),
                 error_text(e.what()).c_str());
  }
}

// The run's formation events (request/timeline.h) and the heads that changed most across each,
// from metrics.jsonl's role scores alone: the chains --explain finds before and after each
// cost a forward pass over the probe per kept model (74 s of one core at the end of
// the default run, against its 3 % budget for keeping evaluations), so one line names the
// command that adds them. A failure to find the events (a metrics line unreadable) is a
// warning, the run itself is done.
void print_timeline(const TrainResult& result) {
  try {
    const std::string dir = result.run_dir.string();
    std::fputs(format_formation_events(run_timeline(result.run_dir, std::nullopt, TimelineChains::left_out), dir).c_str(),
               stdout);
    std::printf("the chain --explain finds before and after each event: mini-gpt inspect-heads --timeline --run %s\n",
                printable_text(dir).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mini-gpt: warning: the run's formation events were not found: %s\n",
                 error_text(e.what()).c_str());
  }
}

}  // namespace

Run add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train the model on a corpus; writes a run directory");
  cmd->add_option("--config", options->config_file, "Config file (JSON: model, train, data)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", options->out_dir, "Run directory (default: the config's train.out_dir)");
  // Under mpirun only rank 0 reads the checkpoint (and sends its state to the others),
  // so the file need not exist on the other ranks' machines.
  cmd->add_option("--resume", options->resume, "Continue from a training checkpoint, bit for bit")
      ->check(CLI::Validator(
          [](std::string& path) { return world_communicator().rank() == 0 ? CLI::ExistingFile(path) : std::string(); },
          "FILE"));
  cmd->add_option("--max-steps", options->max_steps, "Total steps of the run (a resumed run continues up to N)")
      ->check(integer_in(1, kMaxStepCount));
  cmd->add_option("--seed", options->seed, "Seed for initialisation, batches and dropout, in [0, 2^64)")
      ->check(unsigned_64());
  options->compute.add_to(*cmd);
  cmd->add_option("--set", options->sets, "Override any config key: section.key=value (repeatable)");
  cmd->add_flag("--profile", options->profile,
                "After the run, print where a training step's time went per op family, and GFLOP/s");
  cmd->footer(
      "Writes DIR/config.json, DIR/metrics.jsonl, DIR/latest.safetensors, DIR/best.safetensors and each\n"
      "evaluation's weights, DIR/evals/step_NNNNNNN.safetensors; prints the run's formation events at the end\n"
      "(the chains --explain finds around them: inspect-heads --timeline --run DIR).\n"
      "Ctrl-C (SIGTERM) finishes the current step, writes latest.safetensors and exits 130 (143).\n"
      "--resume continues in the checkpoint's own folder, or in an --out that is new or empty.");

  return [options]() {
    // Flags, then every --set, then one validation of the whole: the order of the
    // overrides never decides whether a config is accepted.
    Config config = read_config_file(options->config_file);
    const std::string file_out_dir = config.train.out_dir;
    if (options->out_dir) set_config_value(config, "train.out_dir", *options->out_dir, "--out");
    if (options->max_steps) set_config_value(config, "train.max_steps", *options->max_steps, "--max-steps");
    if (options->seed) set_config_value(config, "train.seed", *options->seed, "--seed");
    if (options->compute.threads != 0) set_config_value(config, "train.threads", options->compute.threads, "--threads");
    if (!options->compute.backend.empty()) set_config_value(config, "train.backend", options->compute.backend, "--backend");
    apply_overrides(config, options->sets,  // --set has the last word
                    options->config_file + (options->sets.empty() ? "" : " with --set"));

    Communicator& world = world_communicator();
    TrainRequest request;
    request.config = config;
    request.communicator = &world;
    if (!options->resume.empty()) request.resume = options->resume;
    // A run directory named on the command line (else a resumed run stays in its checkpoint's folder).
    if (options->out_dir || config.train.out_dir != file_out_dir) request.out_dir = config.train.out_dir;
    ProgressPrinter printer;
    request.on_progress = [&printer](const TrainProgress& p) { printer(p); };
    const HeadLogging heads = head_logging();  // each evaluation's head roles, heads.html at the end
    request.on_evaluation = heads.on_evaluation;
    request.stop_requested = &g_stop_requested;
    request.profile = options->profile;
    std::signal(SIGINT, on_sigint);
    if (world.size() > 1)  // (the run directory, as train() will choose it, for the message)
      install_mpi_signal_handlers(world, request.resume && !request.out_dir
                                             ? (request.resume->has_parent_path() ? request.resume->parent_path().string() : ".")
                                             : config.train.out_dir);
    else std::signal(SIGTERM, on_sigint);

    // The validation rows' entropy floor, when make_corpus.py recorded it for this very
    // corpus and split (io/floor_record.h): how far the loss is from the best possible.
    // Read before training, so a malformed record is refused before any work.
    std::optional<double> floor;
    if (world.rank() == 0) floor = known_validation_floor(config);
    TrainResult result = train(request);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    const bool terminated = g_stop_signal.load() == SIGTERM;
    const int interrupted_status = terminated ? kExitTerminated : kExitInterrupted;
    if (world.rank() != 0) return result.interrupted ? interrupted_status : kExitOk;  // rank 0 reports
    printer.finish();
    if (result.interrupted) {
      std::fprintf(stderr, "%s at step %lld; wrote %s\n", terminated ? "terminated (SIGTERM)" : "interrupted",
                   static_cast<long long>(result.step), (result.run_dir / "latest.safetensors").c_str());
      return interrupted_status;
    }
    // A resumed run says which steps this process trained: the time and tokens/s are theirs alone.
    if (printer.first_step() > 0)
      std::printf("trained %lld steps (from step %lld to %lld) in %s (%.0f tokens/s)\n",
                  static_cast<long long>(result.step - printer.first_step()), static_cast<long long>(printer.first_step()),
                  static_cast<long long>(result.step), format_duration(result.elapsed_s).c_str(), result.tokens_per_s);
    else
      std::printf("trained %lld steps in %s (%.0f tokens/s)\n", static_cast<long long>(result.step),
                  format_duration(result.elapsed_s).c_str(), result.tokens_per_s);
    auto print_val = [&floor](const char* what, double loss) {
      if (floor.has_value())
        std::printf("%s val loss %.4f (floor %.4f, +%.4f)\n", what, loss, floor.value(), loss - floor.value());
      else std::printf("%s val loss %.4f\n", what, loss);
    };
    if (result.final_val_loss) print_val("final", *result.final_val_loss);
    if (result.best_val_loss) print_val("best", *result.best_val_loss);
    if (result.probe_accuracy) {
      std::printf("probe accuracy %.4f", *result.probe_accuracy);
      const char* separator = " (";
      for (const auto& [kind, accuracy] : result.probe_accuracy_by_kind) {
        std::printf("%s%s %.4f", separator, kind.c_str(), accuracy);
        separator = ", ";
      }
      std::printf("%s\n", result.probe_accuracy_by_kind.empty() ? "" : ")");
      // A kind learned by a one-symbol cue shows as a gap between these two.
      for (const TagAccuracy& t : result.probe_accuracy_by_tag)
        std::printf("  %-12s no distractor %.4f, with distractors %.4f\n", t.kind.c_str(), t.no_distractor,
                    t.distractors);
    }
    std::printf("run directory %s\n", result.run_dir.c_str());
    write_heads_page(result, heads);
    print_timeline(result);
    if (result.ranks > 1 && result.training_s > 0)
      std::printf("data-parallel over %d ranks: gradient allreduce %.2f ms/step, %.1f%% of a step (waits included)\n",
                  result.ranks, 1e3 * result.allreduce_s / static_cast<double>(std::max<int64_t>(result.steps_run, 1)),
                  100.0 * result.allreduce_s / result.training_s);
    if (result.profile)
      print_profile(*result.profile, result.tensor_pool, config.train.batch_size * config.model.block_size);
    return kExitOk;
  };
}

}  // namespace mg::cli
