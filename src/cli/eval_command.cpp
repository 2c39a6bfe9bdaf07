// `mini-gpt eval`: the figure of docs/cli.md, "eval": mean cross-entropy in nats per symbol over
// the non-overlapping block_size windows of a text, and/or a probe set's arg-max accuracy
// overall and per question kind (data/README.md).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "data/probe.h"
#include "data/text_file.h"
#include "inference/evaluate.h"
#include "inference/model_store.h"
#include "interp/ablation.h"
#include "io/floor_record.h"
#include "report/eval_format.h"
#include "report/text.h"

namespace mg::cli {

namespace fs = std::filesystem;

namespace {

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

struct EvalOptions {
  std::string checkpoint, text_file, probe;
  bool json = false;
  std::vector<std::string> ablate;  // "L.H" heads whose output is replaced while scoring the probe
  bool mean_ablation = false;
  ComputeOptions compute;
};
}  // namespace

Run add_eval_command(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Score a checkpoint on a text (mean cross-entropy, nats per symbol)");
  cmd->add_option("--checkpoint", options->checkpoint, "Checkpoint (.safetensors)")->required();
  cmd->add_option("--text-file", options->text_file, "UTF-8 text to score");
  cmd->add_option("--probe", options->probe, "Probe set (JSON lines: prompt, answer, kind) to score");
  cmd->add_flag("--json", options->json,
                "Print one JSON object: loss, predictions (with --text-file); probe_accuracy, "
                "probe_accuracy_by_kind, probe_items (with --probe)");
  cmd->add_option("--ablate", options->ablate,
                  "L.H: score the probe with head H of layer L ablated (its output zeroed before the out "
                  "projection); repeatable")
      ->allow_extra_args(false);
  cmd->add_flag("--mean-ablation", options->mean_ablation,
                "With --ablate: replace each ablated head's output by its mean over the probe prompts, not zero");
  options->compute.add_to(*cmd);
  cmd->footer("Give --text-file, --probe or both. Text: windows start at 0, T, 2T, ... (T = block_size); every "
              "symbol after the first of a window is predicted. Probe: the share of prompts whose arg-max next "
              "symbol is the answer, overall and per kind.");

  return [options]() {
    options->compute.apply();
    if (options->text_file.empty() && options->probe.empty())
      throw InputError("eval needs --text-file FILE, --probe FILE or both");
    if ((!options->ablate.empty() || options->mean_ablation) && options->probe.empty())
      throw InputError("--ablate and --mean-ablation score the probe: give --probe FILE");
    if (options->mean_ablation && options->ablate.empty())
      throw InputError("--mean-ablation needs --ablate L.H");
    LoadedModel loaded = load_model(options->checkpoint);
    EvalReport report;
    if (!options->text_file.empty()) {
      std::vector<int32_t> ids = loaded.vocab.encode(read_utf8_file(options->text_file, "--text-file"), options->text_file);
      try {
        report.text = evaluate_windows(loaded.model, ids);
      } catch (const InputError& e) {  // too short: the file is named
        throw InputError("--text-file " + options->text_file + ": " + e.what());
      }
      // The text's entropy floor when make_corpus.py recorded it beside the model's corpus.
      report.floor = known_text_floor(loaded.config.data.path, read_file_bytes(options->text_file, "--text-file"),
                                      loaded.model.config().block_size);
      report.floor_record = (fs::path(loaded.config.data.path).parent_path() / kFloorRecordName).string();
      // The loss is printed before the probe is scored (which takes longer).
      if (!options->json) print(format_eval(report));
    }
    if (!options->probe.empty()) {
      const std::vector<ProbeItem> probes = load_probe_set(options->probe);
      std::vector<std::vector<float>> means;
      if (options->mean_ablation)
        means = head_output_means(loaded.model, probe_texts(loaded.vocab, probes, loaded.model.config().block_size));
      const std::vector<HeadAblation> ablations = parse_ablations(
          options->ablate, loaded.model.config(), options->mean_ablation ? &means : nullptr);
      report.probe = score_probe(loaded.model, loaded.vocab, probes, EvalShare{}, ablations);
      // Each head by its one name (L3.H1), however it was given (3.1 or L3.H1).
      for (const HeadAblation& a : ablations) report.ablated.push_back(head_name(a.layer, a.head));
      report.mean_ablation = options->mean_ablation;
      if (!options->json) {
        EvalReport probe_part = report;
        probe_part.text.reset();
        print(format_eval(probe_part));
      }
    }
    if (options->json) print(eval_json_line(report));
    return kExitOk;
  };
}

}  // namespace mg::cli
