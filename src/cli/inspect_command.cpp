// `mini-gpt inspect-heads`: what each attention head reads in a text (SPEC section 4).
// The model comes from a checkpoint (trained), or from a config and a seed (freshly
// initialised: the lesson's "fixed random parameters", where heads already differ).
// Output: aligned tables (default), one query row per head (--position), the SPEC JSON
// (--format json), each head's parameter slices (--weights), and an SVG (--svg FILE).
#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "data/corpus.h"
#include "data/utf8.h"
#include "jobs/heatmap_svg.h"
#include "jobs/inspect.h"
#include "jobs/inspect_format.h"
#include "jobs/model_store.h"
#include "tensor/error.h"

namespace mg::cli {
namespace {

struct InspectHeadsOptions {
  std::string checkpoint, config, text, format = "table", svg;
  std::optional<uint64_t> seed;
  std::optional<int64_t> layer, head, position;
  bool weights = false;
  ComputeOptions compute;
};

// The model and its vocabulary, from whichever source the options name.
struct Subject {
  Gpt model;
  Vocab vocab;
};

Subject load_subject(const InspectHeadsOptions& o) {
  if (o.checkpoint.empty() == o.config.empty())
    throw InputError("inspect-heads needs exactly one of --checkpoint CKPT or --config FILE (with --seed S)");
  if (!o.checkpoint.empty()) {
    LoadedModel loaded = load_model(o.checkpoint);
    return Subject{std::move(loaded.model), std::move(loaded.vocab)};
  }
  // As `train` starts: the vocabulary from the config's corpus, SPEC initialisation drawn
  // from Rng(seed); without --seed, the config's train.seed, so this is train's step 0.
  Config config = load_config(o.config);
  Corpus corpus = load_corpus(config.data.path, config.data.val_fraction, config.model.block_size);
  config.model.vocab_size = corpus.vocab.size();
  Subject subject{Gpt(config.model), std::move(corpus.vocab)};
  Rng rng(o.seed ? *o.seed : config.train.seed);
  subject.model.initialize(rng);
  return subject;
}

void check_range(const char* option, int64_t value, int64_t count, const std::string& of_what) {
  if (value < 0 || value >= count)
    throw InputError(std::string(option) + " " + std::to_string(value) + " is out of range: " + of_what + ", valid 0.." +
                     std::to_string(count - 1));
}

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace

Run add_inspect_heads_command(CLI::App& app) {
  auto o = std::make_shared<InspectHeadsOptions>();
  CLI::App* cmd = app.add_subcommand("inspect-heads",
                                     "Print what each attention head reads in a text: its projected_weights "
                                     "(softmax of the scaled, masked Q.K scores) with a summary per head");
  auto* checkpoint = cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint (.safetensors) of a trained model");
  auto* config = cmd->add_option("--config", o->config,
                                 "Instead of a checkpoint: a config whose model is freshly initialised (before "
                                 "training); the vocabulary comes from its corpus")
                     ->excludes(checkpoint);
  cmd->add_option("--seed", o->seed, "With --config: the initialisation seed (default: the config's train.seed)")
      ->needs(config);
  cmd->add_option("--text", o->text, "The text to read (at most block_size symbols)")->required();
  cmd->add_option("--layer", o->layer, "Only this layer (0-based)");
  cmd->add_option("--head", o->head, "Only this head (0-based) of each layer");
  cmd->add_option("--format", o->format, "table (default) or json (SPEC section 4)")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--position", o->position,
                  "Only the query row of this position (0-based): each key symbol and its weight");
  cmd->add_flag("--weights", o->weights, "Also print each head's slices of Wq, Wk, Wv (rows) and Wo (columns)");
  cmd->add_option("--svg", o->svg, "Also write the heatmaps (layers x heads) to this SVG file");
  o->compute.add_to(*cmd);

  return [o]() {
    const InspectHeadsOptions& opt = *o;
    opt.compute.apply();
    Subject subject = load_subject(opt);
    const ModelConfig& c = subject.model.config();
    HeadSelection selection;
    if (opt.layer) check_range("--layer", *opt.layer, c.n_layer, "the model has " + std::to_string(c.n_layer) + " layers");
    if (opt.head) check_range("--head", *opt.head, c.n_head, "the model has " + std::to_string(c.n_head) + " heads");
    selection.layer = opt.layer;
    selection.head = opt.head;
    const std::u32string text = decode_utf8(opt.text, "--text");
    if (opt.position && !text.empty())
      check_range("--position", *opt.position, static_cast<int64_t>(text.size()),
                  "the text has " + std::to_string(text.size()) + " symbols");

    Inspection inspection = inspect_heads(subject.model, subject.vocab, text, "--text", {selection, true});
    std::vector<HeadParameters> parameters;
    if (opt.weights)
      for (const auto& h : inspection.heads) parameters.push_back(head_parameters(subject.model, h.layer, h.head));
    const std::vector<HeadParameters>* shown = opt.weights ? &parameters : nullptr;

    // The picture first: if it cannot be written, nothing has been printed yet.
    if (!opt.svg.empty()) write_text_atomically(opt.svg, heatmap_svg(inspection));
    if (opt.format == "json") {
      print(inspection_json(inspection, opt.position, shown).dump() + "\n");
    } else {
      print(opt.position ? format_position(inspection, *opt.position, shown) : format_table(inspection, shown));
      if (!opt.svg.empty()) print("\nheatmaps written to " + opt.svg + "\n");
    }
    std::fflush(stdout);
    return kExitOk;
  };
}

}  // namespace mg::cli
