#include "jobs/train.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "data/batch_sampler.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "jobs/evaluate.h"
#include "jobs/model_store.h"
#include "kernels/runtime.h"
#include "optim/adamw.h"
#include "tensor/error.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The validation batches are drawn from this seed at every evaluation, so successive
// val losses of a run score the same windows and are comparable.
constexpr uint64_t kValidationSeedOffset = 0x5eed0fe7a1ULL;

void write_text_file(const fs::path& path, const std::string& text) {
  std::string temp_name = ".";  // (built in steps: GCC 12 warns falsely on the one-line form)
  temp_name += path.filename().string();
  temp_name += ".tmp";
  const fs::path temp = path.parent_path() / temp_name;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw IoError("cannot write " + temp.string());
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) throw IoError("cannot write " + path.string() + ": " + ec.message());
}

// Keeps the lines of metrics.jsonl up to `step`: a run killed after its last checkpoint
// left lines that the resumed run is about to write again.
void truncate_metrics(const fs::path& path, int64_t step) {
  std::ifstream in(path);
  if (!in) return;
  std::string line, kept;
  while (std::getline(in, line)) {
    auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_object() && json.contains("step") && json["step"].is_number_integer() &&
        json["step"].get<int64_t>() <= step)
      kept += line + "\n";
  }
  write_text_file(path, kept);
}

void ensure_run_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create run directory " + dir.string() + ": " + ec.message());
  // Fail before training, not at the first checkpoint, when the folder is not writable.
  const fs::path probe = dir / ".write-test";
  std::ofstream out(probe);
  if (!out) throw IoError("run directory " + dir.string() + " is not writable");
  out.close();
  fs::remove(probe, ec);
}

// A fresh run never overwrites another run's checkpoints or metrics.
void refuse_to_overwrite(const fs::path& dir) {
  for (const char* name : {"latest.safetensors", "best.safetensors", "metrics.jsonl"})
    if (fs::exists(dir / name))
      throw InputError("run directory " + dir.string() + " already holds a run (" + name +
                       "); continue it with --resume " + (dir / "latest.safetensors").string() +
                       " or choose another --out");
}

std::string format_double(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

}  // namespace

TrainResult train(const TrainRequest& request) {
  Config config = request.config;
  const TrainConfig& tc = config.train;
  set_num_threads(static_cast<int>(tc.threads));
  set_gemm_backend(tc.backend.empty() ? default_gemm_backend() : parse_gemm_backend(tc.backend));

  if (config.data.path.empty())
    throw InputError("data.path is not set: the config must name a corpus file (or pass --set data.path=FILE)");
  Corpus corpus = load_corpus(config.data.path, config.data.val_fraction, config.model.block_size);
  config.model.vocab_size = corpus.vocab.size();
  std::vector<ProbeItem> probes;
  if (!config.data.probe_path.empty()) probes = load_probe_set(config.data.probe_path);

  const fs::path run_dir = tc.out_dir;
  ensure_run_dir(run_dir);
  if (!request.resume) refuse_to_overwrite(run_dir);

  Gpt model(config.model);
  AdamW optimizer(model.parameters(), {tc.beta1, tc.beta2, tc.eps, tc.weight_decay});
  BatchSampler sampler(corpus.train, config.model.block_size, tc.batch_size, tc.seed);
  Rng dropout_rng(tc.seed ^ 0xd409u);
  int64_t step = 0;
  std::optional<double> best_val;

  if (request.resume) {
    LoadedModel saved = load_model(*request.resume);
    if (config_to_json(saved.config)["model"] != config_to_json(config)["model"])
      throw InputError(request.resume->string() + ": its model config differs from this run's (" +
                       config_to_json(saved.config)["model"].dump() + ")");
    if (saved.vocab.symbols() != corpus.vocab.symbols())
      throw InputError(request.resume->string() + ": its vocabulary differs from the corpus " + config.data.path);
    for (size_t i = 0; i < model.parameters().all().size(); ++i)
      model.parameters().all()[i].var.value().copy_from(saved.model.parameters().all()[i].var.value());
    if (!restore_moments(saved.checkpoint, model, optimizer))
      throw InputError(request.resume->string() + ": not a training checkpoint (no optimizer moments)");
    const auto& meta = saved.checkpoint.metadata;
    auto need = [&](const char* key) -> const std::string& {
      auto it = meta.find(key);
      if (it == meta.end()) throw InputError(request.resume->string() + ": metadata lacks \"" + key + "\"");
      return it->second;
    };
    step = saved.checkpoint.step;
    optimizer.set_steps_taken(step);
    sampler.restore(need("sampler_state"));
    dropout_rng.set_state_string(need("dropout_rng_state"));
    if (auto it = meta.find("best_val_loss"); it != meta.end() && !it->second.empty())
      best_val = std::stod(it->second);
    truncate_metrics(run_dir / "metrics.jsonl", step);
  } else {
    Rng init_rng(tc.seed);
    model.initialize(init_rng);
    write_text_file(run_dir / "metrics.jsonl", "");
  }
  write_text_file(run_dir / "config.json", config_to_json(config).dump(2) + "\n");

  auto checkpoint_extra = [&]() {
    return std::map<std::string, std::string>{
        {"sampler_state", sampler.state()},
        {"dropout_rng_state", dropout_rng.state_string()},
        {"best_val_loss", best_val ? format_double(*best_val) : ""},
        {"backend", std::string(backend_name(gemm_backend()))},
    };
  };
  auto save = [&](const char* name) {
    // A step can leave non-finite weights behind a finite loss; such a state is never
    // written over a good checkpoint.
    for (const auto& p : model.parameters().all())
      for (float v : p.var.value().span())
        if (!std::isfinite(v))
          throw Error("parameter " + p.name + " became non-finite at step " + std::to_string(step) +
                      "; stopped, the last good checkpoint is " + (run_dir / "latest.safetensors").string() +
                      " (try a lower train.lr)");
    save_model(run_dir / name, config, corpus.vocab, step, model, &optimizer, checkpoint_extra());
  };

  std::ofstream metrics(run_dir / "metrics.jsonl", std::ios::app);
  if (!metrics) throw IoError("cannot append to " + (run_dir / "metrics.jsonl").string());

  const int64_t B = tc.batch_size, T = config.model.block_size;
  std::vector<int32_t> inputs(static_cast<size_t>(B * T)), targets(inputs.size());
  const auto start = Clock::now();
  const int64_t first_step = step;
  double training_s = 0.0;  // time in training steps only, for tokens/s
  TrainResult result;
  result.run_dir = run_dir;
  ForwardOptions forward_options;
  forward_options.training = true;
  forward_options.dropout_rng = &dropout_rng;

  while (step < tc.max_steps) {
    if (request.stop_requested && request.stop_requested->load()) {
      result.interrupted = true;
      break;
    }
    const auto step_start = Clock::now();
    const double lr = learning_rate(step, tc.lr, tc.min_lr, tc.warmup_steps, tc.max_steps);
    sampler.next(inputs, targets);
    model.parameters().zero_grad();
    Var loss = model.loss(inputs, targets, B, T, forward_options);
    const double loss_value = loss.value()[0];
    if (!std::isfinite(loss_value))
      throw Error("training loss is " + format_double(loss_value) + " at step " + std::to_string(step + 1) +
                  "; stopped, the last good checkpoint is " + (run_dir / "latest.safetensors").string() +
                  " (try a lower train.lr)");
    backward(loss);
    const double grad_norm = clip_grad_norm(model.parameters(), tc.grad_clip);
    optimizer.step(lr);
    ++step;
    training_s += std::chrono::duration<double>(Clock::now() - step_start).count();

    TrainProgress progress;
    progress.step = step;
    progress.max_steps = tc.max_steps;
    progress.loss = loss_value;
    progress.lr = lr;
    progress.grad_norm = grad_norm;
    progress.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    progress.tokens_per_s = static_cast<double>((step - first_step) * B * T) / std::max(training_s, 1e-9);

    if (step % tc.eval_interval == 0 || step == tc.max_steps) {
      const double val = sampled_loss(model, corpus.val, B, tc.eval_batches, tc.seed + kValidationSeedOffset);
      progress.val_loss = val;
      result.final_val_loss = val;
      if (!probes.empty()) progress.probe_accuracy = result.probe_accuracy = probe_accuracy(model, corpus.vocab, probes);
      if (!best_val || val < *best_val) {
        best_val = val;
        save("best.safetensors");
      }
    }
    nlohmann::json line = {{"step", step},         {"lr", lr},
                           {"loss", loss_value},   {"grad_norm", grad_norm},
                           {"tokens_per_s", progress.tokens_per_s}, {"elapsed_s", progress.elapsed_s}};
    if (progress.val_loss) line["val_loss"] = *progress.val_loss;
    if (progress.probe_accuracy) line["probe_accuracy"] = *progress.probe_accuracy;
    metrics << line.dump() << '\n';
    metrics.flush();
    if (!metrics) throw IoError("cannot append to " + (run_dir / "metrics.jsonl").string());
    if (step % tc.checkpoint_interval == 0 || step == tc.max_steps) save("latest.safetensors");
    if (request.on_progress) request.on_progress(progress);
  }
  if (result.interrupted || step == first_step) save("latest.safetensors");

  result.step = step;
  result.best_val_loss = best_val;
  result.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.tokens_per_s = static_cast<double>((step - first_step) * B * T) / std::max(training_s, 1e-9);
  return result;
}

}  // namespace mg
