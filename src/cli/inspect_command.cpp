// `mini-gpt inspect-heads`: what each attention head reads in a text (docs/cli.md).
// The model comes from a checkpoint (trained), or from a config and a seed (freshly
// initialised: the lesson's "fixed random parameters", where heads already differ).
// Output: aligned tables (default), one query row per head (--position), the documented JSON
// (--format json), each head's parameter slices (--weights), and an SVG (--svg FILE).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "cli/commands.h"
#include "cli/inspect_heads.h"
#include "core/error.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "data/text_file.h"
#include "data/utf8.h"
#include "inference/model_store.h"
#include "interp/ablation.h"
#include "interp/attribution.h"
#include "interp/patterns.h"
#include "interp/qk_ov.h"
#include "interp/roles.h"
#include "interp/trace.h"
#include "io/atomic_file.h"
#include "report/compare_format.h"
#include "report/explorer.h"
#include "report/inspect_json.h"
#include "report/patterns_format.h"
#include "report/patterns_svg.h"
#include "report/qk_ov_format.h"
#include "report/qk_ov_svg.h"
#include "report/roles_format.h"
#include "report/trace_format.h"

namespace mg::cli {

Subject load_subject(const InspectHeadsOptions& o) {
  if (o.checkpoint.empty() == o.config.empty())
    throw InputError("inspect-heads needs exactly one of --checkpoint CKPT or --config FILE (with --seed S)");
  if (o.seed && o.config.empty()) throw InputError("--seed S goes with --config FILE: a checkpoint has its weights");
  if (!o.checkpoint.empty()) {
    LoadedModel loaded = load_model(o.checkpoint);
    return Subject{std::move(loaded.model), std::move(loaded.vocab), loaded.config.data.probe_path};
  }
  // As `train` starts: the vocabulary from the config's corpus, docs/model.md's initialisation
  // drawn from Rng(seed); without --seed, the config's train.seed, so this is train's step 0.
  Config config = load_config(o.config);
  Corpus corpus = load_corpus(config.data.path, config.data.val_fraction, config.model.block_size);
  config.model.vocab_size = corpus.vocab.size();
  Subject subject{Gpt(config.model), std::move(corpus.vocab), config.data.probe_path};
  Rng rng(o.seed ? *o.seed : config.train.seed);
  subject.model.initialize(rng);
  return subject;
}

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

InspectModel inspect_model(const Subject& s) { return InspectModel{s.model, s.vocab}; }

std::vector<ProbeItem> readable_probe_set(const std::string& path, const Vocab& vocab) {
  std::vector<ProbeItem> items = load_probe_set(path);
  for (const ProbeItem& item : items) {
    const std::optional<std::vector<int32_t>> ids = vocab.find_all(item.prompt);
    if (ids && !ids->empty() && vocab.find(item.answer)) return items;
  }
  throw InputError("probe file " + path + ": none of its " + std::to_string(items.size()) +
                   " items can be read by this model (a prompt and an answer all in its vocabulary of " +
                   std::to_string(vocab.size()) + " symbols)");
}

namespace {


// The probe set the role scores use: --probe, else the config's data.probe_path; none when
// neither names one.
std::vector<ProbeItem> role_probes(const InspectHeadsOptions& o, const Subject& subject) {
  if (o.probe) return readable_probe_set(*o.probe, subject.vocab);
  // The config's own probe set, when it is still there (a checkpoint may outlive its data).
  if (!subject.probe_path.empty() && std::filesystem::exists(subject.probe_path))
    return load_probe_set(subject.probe_path);
  return {};
}

// --compare A B: match A's heads to B's on the --text, else on the probe prompts (--probe
// or A's data.probe_path) that both vocabularies hold, at most 100, with each head's role.
std::string compare_command(const InspectHeadsOptions& o, const std::u32string& text) {
  LoadedModel a = load_model(o.compare.at(0)), b = load_model(o.compare.at(1));
  const ModelConfig &ca = a.model.config(), &cb = b.model.config();
  const int64_t block = std::min(ca.block_size, cb.block_size);
  std::vector<std::u32string> texts;
  std::string described;
  const std::string probe_path = o.probe ? *o.probe : a.config.data.probe_path;
  std::vector<ProbeItem> probes;
  if (!probe_path.empty()) probes = load_probe_set(probe_path);
  std::vector<std::vector<int32_t>> ids_a, ids_b;
  if (o.text_given) {
    // As in every other mode: an empty text, or one longer than either model's block_size,
    // is refused (it was cut quietly, and an empty one failed an internal check).
    ids_a.push_back(encode_for_model(a.model, a.vocab, text, "--text"));
    ids_b.push_back(encode_for_model(b.model, b.vocab, text, "--text"));
    texts.push_back(text);
    described = "the --text";
  } else {
    for (const ProbeItem& item : probes) {
      const bool known = a.vocab.find_all(item.prompt) && b.vocab.find_all(item.prompt);
      if (known && texts.size() < 100) texts.push_back(item.prompt.substr(item.prompt.size() > static_cast<size_t>(block) ? item.prompt.size() - block : 0));
    }
    described = std::to_string(texts.size()) + " probe prompts of " + probe_path + " that both vocabularies hold";
  }
  if (texts.empty()) throw InputError("--compare needs a --text, or a probe set (--probe FILE) both models can read");
  if (!o.text_given)
    for (const auto& t : texts) {
      ids_a.push_back(a.vocab.encode(t, "probe prompt"));
      ids_b.push_back(b.vocab.encode(t, "probe prompt"));
    }
  ComparisonReport report{o.compare.at(0), o.compare.at(1), described, compare_heads(a.model, b.model, ids_a, ids_b),
                          {}, {}};
  auto roles_of = [&](LoadedModel& m, const std::vector<std::vector<int32_t>>& ids) {
    RoleOptions options;
    options.texts = ids;
    options.probes = probes.empty() ? nullptr : &probes;
    return score_head_roles(m.model, m.vocab, options);
  };
  report.roles_a = roles_of(a, ids_a);
  report.roles_b = roles_of(b, ids_b);
  return o.format == "json" ? comparison_json(report).dump() + "\n" : format_comparison(report);
}

// Head roles over the stated texts: --text-file's block_size windows (at most 200), else
// the probe prompts, else (only for the JSON's "roles") the inspected text alone
// (interp/ablation.h's probe_role_report). With ABLATE, each head's probe-accuracy drop too.
RoleReport head_roles(const InspectHeadsOptions& o, Subject& subject, const std::u32string& text, bool ablate) {
  const std::vector<ProbeItem> probes = role_probes(o, subject);
  const std::string probe_name = o.probe ? *o.probe : subject.probe_path;
  if (!o.text_file)
    return probe_role_report(subject.model, subject.vocab, probes, probe_name, text, ablate, o.mean_ablation);
  const int64_t block_size = subject.model.config().block_size;
  RoleOptions options;
  options.probes = probes.empty() ? nullptr : &probes;
  const std::vector<int32_t> ids = subject.vocab.encode(read_utf8_file(*o.text_file, "--text-file"), *o.text_file);
  options.texts = text_windows(ids, block_size, 200);
  options.texts_description = std::to_string(options.texts.size()) + " windows of at most " + std::to_string(block_size) +
                              " symbols from " + *o.text_file;
  RoleReport report = score_head_roles(subject.model, subject.vocab, options);
  if (ablate && !probes.empty()) add_probe_ablation(subject.model, subject.vocab, probes, o.mean_ablation, report);
  return report;
}

// --html FILE: refused before any work when it cannot be written there (the options it
// does not show are refused by the table, inspect_modes.cpp).
void check_explorer_options(const InspectHeadsOptions& o) {
  namespace fs = std::filesystem;
  const fs::path path(*o.html);
  try {
    refuse_non_regular_target(path);  // empty, "dir/", a folder, a device, a FIFO, a symlink
  } catch (const InputError& e) {
    throw InputError(std::string("--html: ") + e.what());
  }
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError("--html " + path.string() + ": the folder " + folder.string() + " does not exist");
  if (::access(folder.c_str(), W_OK) != 0)  // a read-only folder or file system: say so before the work
    throw IoError("cannot write " + path.string() + ": " + std::strerror(errno));
  if (o.run) {
    if (!fs::is_directory(*o.run, ec)) throw InputError("--run " + *o.run + " is not a run directory (not a folder)");
    if (!fs::exists(fs::path(*o.run) / "metrics.jsonl", ec))
      throw InputError("--run " + *o.run + " holds no metrics.jsonl");
  }
}

// The head explorer page: every head on the text, with roles and ablation costs when a
// probe set is at hand, traces, circuits and, with --run, the run's curves.
void write_explorer(const InspectHeadsOptions& o, Subject& subject, const std::u32string& text) {
  const std::vector<ProbeItem> probes = role_probes(o, subject);
  ExplorerOptions options;
  options.source = !o.checkpoint.empty() ? "checkpoint " + o.checkpoint
                                         : "config " + o.config + ", freshly initialised" +
                                               (o.seed ? " with seed " + std::to_string(*o.seed) : std::string());
  options.probes = probes.empty() ? nullptr : &probes;
  options.probe_name = o.probe ? *o.probe : subject.probe_path;
  options.mean_ablation = o.mean_ablation;
  options.position = o.position;
  if (o.run) options.run_dir = *o.run;
  const nlohmann::ordered_json data = explorer_data(subject.model, subject.vocab, text, "--text", options);
  const std::string page = explorer_html(data);
  write_text_atomically(*o.html, page);
  std::string positions;
  for (const auto& p : data["traces"]["positions"]) positions += (positions.empty() ? "" : ",") + p.dump();
  print(format("head explorer written to %s (%.1f MB): %lld layers x %lld heads, %lld symbols, traces at %s, %s\n",
               o.html->c_str(), static_cast<double>(page.size()) / 1e6,
               static_cast<long long>(subject.model.config().n_layer),
               static_cast<long long>(subject.model.config().n_head), static_cast<long long>(text.size()),
               data["traces"]["all_positions"].get<bool>() ? "every position" : ("positions " + positions).c_str(),
               probes.empty() ? "no probe" : ("probe " + options.probe_name).c_str()));
  std::fflush(stdout);
}

// The model's heads selected by --layer and --head, checked against it.
HeadSelection head_selection(const InspectHeadsOptions& o, const ModelConfig& c) {
  HeadSelection selection;
  if (o.layer) check_index("--layer", *o.layer, c.n_layer, "the model has " + std::to_string(c.n_layer) + " layers");
  if (o.head) check_index("--head", *o.head, c.n_head, "the model has " + std::to_string(c.n_head) + " heads");
  selection.layer = o.layer;
  selection.head = o.head;
  return selection;
}

}  // namespace

// The modes, each with the options inspect_modes.cpp's table gives it.

void compare_mode(const InspectHeadsOptions& o) { print(compare_command(o, decode_utf8(o.text, "--text"))); }

void explorer_mode(const InspectHeadsOptions& o) {
  check_explorer_options(o);
  Subject subject = load_subject(o);
  if (!o.text_given) throw InputError("--html needs --text TEXT");
  write_explorer(o, subject, decode_utf8(o.text, "--text"));
}

void circuits_mode(const InspectHeadsOptions& o) {
  if (!o.layer || !o.head) throw InputError("--circuits needs --layer L and --head H");
  Subject subject = load_subject(o);
  head_selection(o, subject.model.config());
  const HeadCircuits circuits = head_circuits(subject.model, subject.vocab, *o.layer, *o.head);
  if (o.svg) write_text_atomically(*o.svg, qk_ov_svg(circuits));
  print(format_circuits(circuits, o.top));
  if (o.svg) print("\nheatmaps written to " + *o.svg + "\n");
}

void roles_mode(const InspectHeadsOptions& o) {
  Subject subject = load_subject(o);
  const RoleReport report = head_roles(o, subject, std::u32string(), true);
  print(o.format == "json" ? roles_json_text(report) : format_roles(report));
}

void trace_mode(const InspectHeadsOptions& o) {
  if (!o.text_given) throw InputError("--trace needs --text TEXT");
  if (!o.position) throw InputError("--trace needs --position P, the query position to trace");
  parse_head_name(*o.trace, "--trace");  // before loading the model
  Subject subject = load_subject(o);
  if (o.format == "json") return print(trace_json_text(o, inspect_model(subject)));
  print(format_trace(trace_for(o, inspect_model(subject))));
}

// Every selected head's projected_weights: the matrices (or one query row, --position),
// with --weights each head's parameter slices, with --svg the heatmaps; the JSON carries
// the roles too, scored on --probe or --text-file's texts.
void default_view(const InspectHeadsOptions& o) {
  if (!o.text_given) throw InputError("inspect-heads needs --text TEXT (or a mode: --roles, --circuits, --compare, ...)");
  if (o.format != "json")
    for (const auto& [name, given] : {std::pair{"--probe", o.probe.has_value()}, {"--text-file", o.text_file.has_value()}})
      if (given) throw InputError(std::string(name) + " is used by the default view only with --format json (its roles)");
  Subject subject = load_subject(o);
  const Inspection inspection = inspect_for(o, inspect_model(subject));
  // The picture first: if it cannot be written, nothing has been printed yet. An
  // output that is not a regular file (a device, FIFO, symlink) is refused, not replaced.
  if (o.svg) write_text_atomically(*o.svg, patterns_svg(inspection));
  if (o.format == "json") {
    const RoleReport roles = head_roles(o, subject, inspection.text, false);
    return print(patterns_json_text(o, inspect_model(subject), inspection, roles));
  }
  std::vector<HeadParameters> parameters;
  if (o.weights)
    for (const auto& h : inspection.heads) parameters.push_back(head_parameters(subject.model, h.layer, h.head));
  const std::vector<HeadParameters>* shown = o.weights ? &parameters : nullptr;
  print(o.position ? format_position(inspection, *o.position, shown) : format_table(inspection, shown));
  if (o.svg) print("\nheatmaps written to " + *o.svg + "\n");
}

Run add_inspect_heads_command(CLI::App& app) {
  auto o = std::make_shared<InspectHeadsOptions>();
  CLI::App* cmd = app.add_subcommand("inspect-heads",
                                     "Print what each attention head reads in a text: its projected_weights "
                                     "(softmax of the scaled, masked Q.K scores) with a summary per head");
  auto* checkpoint = cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint (.safetensors) of a trained model");
  cmd->add_option("--config", o->config,
                                 "Instead of a checkpoint: a config whose model is freshly initialised (before "
                                 "training); the vocabulary comes from its corpus")
      ->excludes(checkpoint);
  cmd->add_option("--seed", o->seed, "With --config: the initialisation seed (default: the config's train.seed)")
      ->check(unsigned_64());
  cmd->add_option("--text", o->text,
                  "The text to read (at most block_size symbols); needed except with --roles, --circuits, --composition "
                  "and --patch")
      ->each([o](const std::string&) { o->text_given = true; });
  cmd->add_option("--layer", o->layer, "Only this layer (0-based)");
  cmd->add_option("--head", o->head, "Only this head (0-based) of each layer");
  cmd->add_option("--format", o->format, "table (default) or json (docs/cli.md)")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--position", o->position,
                  "Only the query row of this position (0-based): each key symbol and its weight");
  cmd->add_flag("--weights", o->weights, "Also print each head's slices of Wq, Wk, Wv (rows) and Wo (columns)");
  cmd->add_option("--svg", o->svg,
                  "Also write the heatmaps (layers x heads) to this SVG file (atomically; only a regular file is "
                  "replaced)");
  cmd->add_option("--trace", o->trace,
                  "L.H: the worked trace of head H of layer L at --position P, every step of the formula with its "
                  "numbers");
  cmd->add_flag("--roles", o->roles,
                "Each head's role scores (previous-token, offset, current-token, first position, induction, "
                "answer-finding, copy-forward; the last two also per question kind), its role (writer, carrier, ...) and its "
                "probe-accuracy drop when ablated, overall and per kind");
  cmd->add_option("--probe", o->probe, "Probe set for --roles (default: the config's data.probe_path), --attribution and --patch "
                                      "(per question kind)");
  cmd->add_option("--text-file", o->text_file, "With --roles: score patterns on this file's block_size windows "
                                                "instead of the probe prompts");
  cmd->add_flag("--mean-ablation", o->mean_ablation,
                "With --roles: replace an ablated head's output by its mean over the probe prompts, not by zero");
  cmd->add_flag("--circuits", o->circuits,
                "The QK and OV circuits of --layer L --head H in the symbol basis (top pairs; --svg draws both V x V "
                "tables)");
  cmd->add_option("--compare", o->compare,
                  "A.safetensors B.safetensors: match A's heads to B's by their attention patterns (on --text, else "
                  "the probe prompts) and print the pairs with their roles and similarity")
      ->expected(2);
  cmd->add_option("--html", o->html,
                  "Write the head explorer to this file: one self-contained HTML page with every head's weights, "
                  "roles, ablation cost, traces and circuits (atomically; only a regular file is replaced)");
  cmd->add_option("--run", o->run, "With --html: also draw this run directory's metrics.jsonl (loss, probe accuracy, "
                                   "head roles when present)");
  cmd->add_option("--top", o->top, "How many pairs (--circuits, --composition), output symbols (--trace, --logit-lens) or rows "
                                  "(--patch) to list (default 10)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000}));
  add_circuit_options(*cmd, *o);
  add_edge_circuit_options(*cmd, *o);
  o->compute.add_to(*cmd);

  cmd->footer(inspect_modes_help());

  return [o, cmd]() {
    const InspectHeadsOptions& opt = *o;
    const InspectMode& mode = choose_mode(opt, *cmd);  // before any work: an unused option is refused
    opt.compute.apply();
    mode.run(opt);
    std::fflush(stdout);
    return kExitOk;
  };
}

}  // namespace mg::cli
