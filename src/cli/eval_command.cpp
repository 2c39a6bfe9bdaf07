// `mini-gpt eval`: the figure of docs/cli.md, "eval": mean cross-entropy in nats per symbol over
// the non-overlapping block_size windows of a text, and/or a probe set's arg-max accuracy
// overall and per question kind (data/README.md).
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "data/probe.h"
#include "data/text_file.h"
#include "inference/evaluate.h"
#include "inference/model_store.h"
#include "interp/ablation.h"
#include "io/floor_record.h"
#include "report/text.h"

namespace mg::cli {

namespace fs = std::filesystem;

namespace {
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
    std::vector<std::string> json_fields;  // "key": value, in print order
    if (!options->text_file.empty()) {
      std::vector<int32_t> ids = loaded.vocab.encode(read_utf8_file(options->text_file, "--text-file"), options->text_file);
      EvalResult result;
      try {
        result = evaluate_windows(loaded.model, ids);
      } catch (const InputError& e) {  // too short: the file is named
        throw InputError("--text-file " + options->text_file + ": " + e.what());
      }
      char field[64];
      std::snprintf(field, sizeof field, "\"loss\": %.9g", result.loss);
      json_fields.push_back(field);
      json_fields.push_back("\"predictions\": " + std::to_string(result.predictions));
      // The text's entropy floor when make_corpus.py recorded it beside the model's corpus.
      const std::optional<FloorRecord::Text> floor =
          known_text_floor(loaded.config.data.path, read_file_bytes(options->text_file, "--text-file"),
                           loaded.model.config().block_size);
      if (floor) {
        std::snprintf(field, sizeof field, "\"floor\": %.9g", floor->floor);
        json_fields.push_back(field);
      }
      if (!options->json) {
        std::printf("loss %.6f nats/symbol over %lld predictions\n", result.loss,
                    static_cast<long long>(result.predictions));
        if (floor)
          std::printf("floor %.6f nats/symbol (+%.6f): %s, recorded in %s\n", floor->floor, result.loss - floor->floor,
                      printable_text(floor->about).c_str(),
                      printable_text((fs::path(loaded.config.data.path).parent_path() / kFloorRecordName).string()).c_str());
      }
    }
    if (!options->probe.empty()) {
      const std::vector<ProbeItem> probes = load_probe_set(options->probe);
      std::vector<std::vector<float>> means;
      if (options->mean_ablation)
        means = head_output_means(loaded.model, probe_texts(loaded.vocab, probes, loaded.model.config().block_size));
      const std::vector<HeadAblation> ablations = parse_ablations(
          options->ablate, loaded.model.config(), options->mean_ablation ? &means : nullptr);
      const ProbeScore score = score_probe(loaded.model, loaded.vocab, probes, EvalShare{}, ablations);
      if (!ablations.empty()) {
        // Each head by its one name (L3.H1), however it was given (3.1 or L3.H1).
        nlohmann::json heads = nlohmann::json::array();
        for (const HeadAblation& a : ablations) heads.push_back(head_name(a.layer, a.head));
        json_fields.push_back("\"ablated\": " + heads.dump());
        json_fields.push_back(std::string("\"ablation\": \"") + (options->mean_ablation ? "mean" : "zero") + "\"");
        if (!options->json) {
          std::string list;
          for (const HeadAblation& a : ablations) list += (list.empty() ? "" : ", ") + head_name(a.layer, a.head);
          std::printf("ablated (%s): %s\n", options->mean_ablation ? "mean" : "zero", list.c_str());
        }
      }
      nlohmann::json by_kind = nlohmann::json::object();
      for (size_t k = 0; k < score.kinds.size(); ++k) by_kind[score.kinds[k]] = score.kind_accuracy(k);
      json_fields.push_back("\"probe_accuracy\": " + nlohmann::json(score.accuracy()).dump());
      json_fields.push_back("\"probe_accuracy_by_kind\": " + by_kind.dump());
      json_fields.push_back("\"probe_items\": " + std::to_string(score.items));
      const std::vector<TagAccuracy> by_tag = tag_accuracies(score);
      if (!by_tag.empty()) {
        nlohmann::json tags = nlohmann::json::object();
        for (const TagAccuracy& t : by_tag)
          tags[t.kind] = {{"no_distractor", t.no_distractor}, {"no_distractor_items", t.no_distractor_items},
                          {"distractors", t.distractors}, {"distractor_items", t.distractor_items}};
        json_fields.push_back("\"probe_accuracy_by_tag\": " + tags.dump());
      }
      if (!options->json) {
        std::printf("probe accuracy %.4f over %lld items\n", score.accuracy(), static_cast<long long>(score.items));
        for (size_t k = 0; k < score.kinds.size(); ++k) {
          std::printf("  %-12s %.4f  (%lld of %lld)", score.kinds[k].c_str(), score.kind_accuracy(k),
                      static_cast<long long>(score.kind_correct[k]), static_cast<long long>(score.kind_items[k]));
          // The items whose cue alone finds the fact, and those where only binding does.
          if (score.tagged(k))
            std::printf("  no distractor %.4f (%lld of %lld), with distractors %.4f (%lld of %lld)",
                        score.alone_accuracy(k), static_cast<long long>(score.alone_correct[k]),
                        static_cast<long long>(score.alone_items[k]), score.distracted_accuracy(k),
                        static_cast<long long>(score.distracted_correct[k]),
                        static_cast<long long>(score.distracted_items[k]));
          std::printf("\n");
        }
      }
    }
    if (options->json) {
      std::string line = "{";
      for (size_t i = 0; i < json_fields.size(); ++i) line += (i ? ", " : "") + json_fields[i];
      std::printf("%s}\n", line.c_str());
    }
    return kExitOk;
  };
}

}  // namespace mg::cli
