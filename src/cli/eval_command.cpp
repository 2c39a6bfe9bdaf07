// `mini-gpt eval`: the SPEC section 4 figure, mean cross-entropy in nats per symbol over
// the non-overlapping block_size windows of a text.
#include <cstdio>

#include "cli/commands.h"
#include "data/text_file.h"
#include "jobs/evaluate.h"
#include "jobs/model_store.h"
#include "tensor/error.h"

namespace mg::cli {

namespace {
struct EvalOptions {
  std::string checkpoint, text_file;
  bool json = false;
  ComputeOptions compute;
};
}  // namespace

Run add_eval_command(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Score a checkpoint on a text (mean cross-entropy, nats per symbol)");
  cmd->add_option("--checkpoint", options->checkpoint, "Checkpoint (.safetensors)")->required();
  cmd->add_option("--text-file", options->text_file, "UTF-8 text to score")->required();
  cmd->add_flag("--json", options->json, "Print {\"loss\": ..., \"predictions\": ...}");
  options->compute.add_to(*cmd);
  cmd->footer("Windows start at 0, T, 2T, ... (T = block_size); every symbol after the first of a window is predicted.");

  return [options]() {
    options->compute.apply();
    LoadedModel loaded = load_model(options->checkpoint);
    std::vector<int32_t> ids = loaded.vocab.encode(read_utf8_file(options->text_file, options->text_file), options->text_file);
    EvalResult result = evaluate_windows(loaded.model, ids);
    if (options->json)
      std::printf("{\"loss\": %.9g, \"predictions\": %lld}\n", result.loss, static_cast<long long>(result.predictions));
    else
      std::printf("loss %.6f nats/symbol over %lld predictions\n", result.loss,
                  static_cast<long long>(result.predictions));
    return kExitOk;
  };
}

}  // namespace mg::cli
