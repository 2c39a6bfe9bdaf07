// `mini-gpt serve`: the head explorer live on any text the learner types, on a local web
// server (docs/cli.md, "serve"). This file parses the options, loads the model and the
// probe set, and turns SIGINT/SIGTERM into the server's stop; src/serve/ does the rest.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <list>
#include <optional>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "data/probe.h"
#include "data/utf8.h"
#include "inference/model_store.h"
#include "io/evaluation_models.h"
#include "io/config.h"
#include "io/floor_record.h"
#include "serve/run_watch.h"
#include "serve/server.h"

namespace mg::cli {
namespace {

// The main job's showcase question (scripts/main_job.sh), which the page opens with.
constexpr const char* kShowcaseQuestion = "红铅笔是小陈的。灰鞋子是小马的。黄雨伞是小林的。灰鞋子是谁的？灰鞋子是小";

struct ServeCommandOptions {
  std::string checkpoint, host = "127.0.0.1", text = kShowcaseQuestion;
  std::optional<std::string> probe;
  std::vector<std::string> runs;
  int port = 8000, threads = 2, queue = 32;
};

bool loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

// The validation rows' floor for the run's curves, when the checkpoint's corpus has one on
// record; a corpus that is gone has none.
std::optional<double> validation_floor(const Config& config) {
  try {
    return known_validation_floor(config);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// What serve shows of one run: its model (replaced as the run writes latest.safetensors), the
// probe set it is scored on and the watch that follows it.
struct WatchedRun {
  serve::ProbeSet probes;
  std::optional<serve::ServedModel> served;
  std::optional<serve::RunWatch> watch;
};

// The probe set as inspect-heads finds it: --probe, else the model's data.probe_path while
// it is there.
serve::ProbeSet probe_set_for(const ServeCommandOptions& o, const Config& config) {
  namespace fs = std::filesystem;
  std::error_code ec;
  serve::ProbeSet probes;
  const std::string probe_path = o.probe ? *o.probe : config.data.probe_path;
  if (o.probe || (!probe_path.empty() && fs::exists(probe_path, ec))) {
    probes.items = load_probe_set(probe_path);
    probes.name = probe_path;
  }
  return probes;
}

// The model a run is served with at start, and the file it came from: --checkpoint for the
// first, else the run's latest.safetensors, else the last model it kept at an evaluation;
// none yet (serve started beside a new run) when the file asked for is the run's
// latest.safetensors and neither it nor a kept model is written. Any other missing file is
// load_model's error.
struct StartingModel {
  std::optional<LoadedModel> loaded;
  std::string source;
};
StartingModel starting_model(const ServeCommandOptions& o, size_t index) {
  namespace fs = std::filesystem;
  const fs::path dir = o.runs.at(index), latest = dir / "latest.safetensors";
  const fs::path asked = index == 0 && !o.checkpoint.empty() ? fs::path(o.checkpoint) : latest;
  std::error_code ec, a, b;
  if (fs::exists(asked, ec)) return {load_model(asked), asked.string()};
  const bool runs_latest = fs::weakly_canonical(asked, a) == fs::weakly_canonical(latest, b) && !a && !b;
  if (!runs_latest) return {load_model(asked), asked.string()};  // its error names the file
  const std::vector<EvaluationModel> kept = list_evaluation_models(dir);
  if (!kept.empty()) return {load_model(kept.back().path), kept.back().path.string()};
  return {std::nullopt, latest.string()};
}

// A run's config.json while it has no model yet (for its probe set and floor); none when it
// is not there or does not load.
std::optional<Config> run_config(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir / "config.json", ec)) return std::nullopt;
  try {
    return load_config(dir / "config.json");
  } catch (const Error&) {
    return std::nullopt;
  }
}

int serve(const ServeCommandOptions& o) {
  namespace fs = std::filesystem;
  // SIGINT and SIGTERM are blocked here, before any thread starts (OpenMP's, the server's,
  // the run watcher's), so that every thread inherits the mask and only the watcher below
  // receives them, by sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  if (o.host.empty()) throw InputError("--host must name an address (127.0.0.1 serves this machine only)");
  // The page's first text, checked as every other command checks a text (a symbol outside
  // the vocabulary is the page's to mark): "--text: invalid UTF-8 at byte offset N".
  decode_utf8(o.text, "--text");
  std::error_code ec;
  for (const std::string& run : o.runs)
    if (!fs::is_directory(run, ec)) throw InputError("--run " + run + " is not a run directory (not a folder)");
  if (o.checkpoint.empty() && o.runs.empty())
    throw InputError("serve needs --checkpoint CKPT, or --run DIR (its latest.safetensors)");

  // The first model is --checkpoint's, or the first run's; every further run serves its own.
  // A run's model may not be there yet (serve started beside a new run, before its first
  // checkpoint or kept evaluation): its page shows the curves and waits for it.
  std::optional<StartingModel> first;
  if (o.runs.empty()) first = StartingModel{load_model(o.checkpoint), o.checkpoint};
  else first = starting_model(o, 0);
  const std::optional<Config> first_config = first->loaded ? std::optional<Config>(first->loaded->config)
                                                           : run_config(o.runs.at(0));
  serve::ProbeSet probes = first_config ? probe_set_for(o, *first_config) : probe_set_for(o, Config{});
  const std::optional<double> floor = !o.runs.empty() && first_config ? validation_floor(*first_config) : std::nullopt;
  const bool waiting = !first->loaded;
  serve::ServedModel served(first->loaded ? serve::make_snapshot(std::move(*first->loaded), probes, first->source, 1)
                                          : nullptr);

  std::list<WatchedRun> watched;  // (a list: each RunWatch holds references into its element)
  std::vector<serve::RunWatch*> runs;
  for (size_t i = 0; i < o.runs.size(); ++i) {
    WatchedRun& run = watched.emplace_back();
    if (i == 0) {
      run.watch.emplace(o.runs[i], served, probes, floor);
    } else {
      StartingModel model = starting_model(o, i);
      const std::optional<Config> config = model.loaded ? std::optional<Config>(model.loaded->config)
                                                        : run_config(o.runs[i]);
      run.probes = probe_set_for(o, config ? *config : Config{});
      const std::optional<double> run_floor = config ? validation_floor(*config) : std::nullopt;
      run.served.emplace(model.loaded ? serve::make_snapshot(std::move(*model.loaded), run.probes, model.source, 1)
                                      : nullptr);
      run.watch.emplace(o.runs[i], *run.served, run.probes, run_floor);
    }
    runs.push_back(&*run.watch);
  }
  serve::ServerOptions options;
  options.host = o.host;
  options.port = o.port;
  options.workers = o.threads;
  options.queue = o.queue;
  options.default_text = o.text;
  serve::Server server(options, served, probes, runs);
  const int port = server.bind();  // InputError (exit 2) when the port is taken
  if (!loopback(o.host))
    std::cerr << "mini-gpt: warning: serving on " << o.host << ":" << port
              << ", not this machine's loopback: anyone who can reach this port can use the server" << std::endl;
  for (serve::RunWatch* run : runs) run->start(0.5);

  int stopped_by = 0;
  std::thread signals([&] {
    int signal = 0;
    if (sigwait(&stop_signals, &signal) == 0) stopped_by = signal;
    server.stop();
  });
  const std::string host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  std::printf("mini-gpt serve: open http://%s:%d/ (%s; Ctrl-C stops)\n", host.c_str(), port,
              probes.items.empty() ? "no probe set" : ("probe " + probes.name).c_str());
  if (waiting)
    std::printf("mini-gpt serve: waiting for %s, the run's first checkpoint; the page shows its curves meanwhile\n",
                first->source.c_str());
  std::fflush(stdout);
  server.serve();
  for (serve::RunWatch* run : runs) run->stop();
  if (stopped_by == 0) {  // the server ended by itself: wake the watcher so that it ends too
    pthread_kill(signals.native_handle(), SIGTERM);
    signals.join();
    throw Error("the server stopped serving on its own");
  }
  signals.join();
  std::printf("mini-gpt serve: stopped (%s)\n", stopped_by == SIGTERM ? "SIGTERM" : "SIGINT");
  return stopped_by == SIGTERM ? kExitTerminated : kExitInterrupted;
}

}  // namespace

Run add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve the head explorer live on a local web server: any text, ablation and patching by click, a run "
               "followed while it trains");
  cmd->add_option("--checkpoint", o->checkpoint,
                  "Checkpoint (.safetensors) to serve; with --run, the first run's model at start (default its "
                  "latest.safetensors, else its last kept evaluation; when neither is written yet the page shows "
                  "the run's curves and waits for it)");
  cmd->add_option("--probe", o->probe,
                  "Probe set the roles and per-kind tables are scored on, once (default: the checkpoint's "
                  "data.probe_path)");
  cmd->add_option("--run", o->runs,
                  "A run directory to follow: its metrics.jsonl as it grows, latest.safetensors reloaded when "
                  "replaced, a step slider over the models it keeps at its evaluations (evals/) with its formation "
                  "events; repeat it to follow several runs side by side");
  cmd->add_option("--host", o->host, "Address to bind (default 127.0.0.1: this machine only)");
  cmd->add_option("--port", o->port, "Port (default 8000; 0: any free port, printed)")->check(integer_in(0, 65535));
  cmd->add_option("--threads", o->threads, "Requests computed at once, each on one core (default 2)")
      ->check(integer_in(1, 64));
  cmd->add_option("--queue", o->queue, "Requests waiting for a thread; more are answered 429 (default 32)")
      ->check(integer_in(0, 4096));
  cmd->add_option("--text", o->text, "The text the page opens with (default: the main job's showcase question)");
  return [o]() { return serve(*o); };
}

}  // namespace mg::cli
