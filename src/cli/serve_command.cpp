// `mini-gpt serve`: the head explorer live on any text the learner types, on a local web
// server (docs/cli.md, "serve"). This file parses the options, loads the model and the
// probe set, and turns SIGINT/SIGTERM into the server's stop; src/serve/ does the rest.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "data/probe.h"
#include "data/utf8.h"
#include "inference/model_store.h"
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
  std::optional<std::string> probe, run;
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
  if (o.run && !fs::is_directory(*o.run, ec)) throw InputError("--run " + *o.run + " is not a run directory (not a folder)");

  // `serve --run DIR --checkpoint DIR/latest.safetensors` started beside a new run, before
  // its first checkpoint: the page shows the run's curves and waits for the model, which
  // the watcher loads as soon as it is written. Any other missing checkpoint is an error.
  auto is_runs_latest = [&] {
    std::error_code a, b;
    const fs::path checkpoint = fs::weakly_canonical(o.checkpoint, a);
    const fs::path latest = fs::weakly_canonical(fs::path(*o.run) / "latest.safetensors", b);
    return !a && !b && !checkpoint.empty() && checkpoint == latest;
  };
  const bool waiting = o.run && !fs::exists(o.checkpoint, ec) && is_runs_latest();
  std::optional<LoadedModel> loaded;
  std::optional<Config> config;  // the checkpoint's, or while waiting the run's config.json
  if (!waiting) {
    loaded.emplace(load_model(o.checkpoint));
    config = loaded->config;
  } else if (fs::exists(fs::path(*o.run) / "config.json", ec)) {
    try {
      config = load_config(fs::path(*o.run) / "config.json");
    } catch (const Error&) {  // a run's config that does not load names no probe set and no floor
    }
  }
  serve::ProbeSet probes;
  // As inspect-heads: --probe, else the checkpoint's data.probe_path while it is there.
  const std::string probe_path = o.probe ? *o.probe : config ? config->data.probe_path : std::string();
  if (o.probe || (!probe_path.empty() && fs::exists(probe_path, ec))) {
    probes.items = load_probe_set(probe_path);
    probes.name = probe_path;
  }
  const std::optional<double> floor = o.run && config ? validation_floor(*config) : std::nullopt;
  serve::ServedModel served(loaded ? serve::make_snapshot(std::move(*loaded), probes, o.checkpoint, 1) : nullptr);

  std::optional<serve::RunWatch> watch;
  if (o.run) watch.emplace(*o.run, served, probes, floor);
  serve::ServerOptions options;
  options.host = o.host;
  options.port = o.port;
  options.workers = o.threads;
  options.queue = o.queue;
  options.default_text = o.text;
  serve::Server server(options, served, probes, watch ? &*watch : nullptr);
  const int port = server.bind();  // InputError (exit 2) when the port is taken
  if (!loopback(o.host))
    std::cerr << "mini-gpt: warning: serving on " << o.host << ":" << port
              << ", not this machine's loopback: anyone who can reach this port can use the server" << std::endl;
  if (watch) watch->start(0.5);

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
                o.checkpoint.c_str());
  std::fflush(stdout);
  server.serve();
  if (watch) watch->stop();
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
                  "Checkpoint (.safetensors) to serve; with --run DIR, DIR/latest.safetensors may be not yet written: "
                  "the page shows the run's curves and waits for it")
      ->required();
  cmd->add_option("--probe", o->probe,
                  "Probe set the roles and per-kind tables are scored on, once (default: the checkpoint's "
                  "data.probe_path)");
  cmd->add_option("--run", o->run,
                  "A run directory to follow: its metrics.jsonl as it grows, and latest.safetensors reloaded when "
                  "replaced");
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
