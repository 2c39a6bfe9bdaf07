// The head views' modes (request/modes.h): the default view, --html, --trace, --roles,
// --circuits and --compare.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "data/text_file.h"
#include "data/utf8.h"
#include "inference/model_store.h"
#include "interp/ablation.h"
#include "interp/compare.h"
#include "interp/logit_choice.h"
#include "io/atomic_file.h"
#include "io/evaluation_models.h"
#include "report/explorer.h"
#include "report/patterns_format.h"
#include "report/patterns_svg.h"
#include "report/qk_ov_format.h"
#include "report/qk_ov_svg.h"
#include "report/roles_format.h"
#include "request/modes.h"
#include "request/subject.h"
#include "request/timeline.h"

namespace mg {

std::u32string argument_text(const std::string& name, const std::string& utf8) {
  try {
    return decode_utf8(utf8, name);
  } catch (const InputError& e) {  // "NAME: invalid UTF-8 at byte offset ..."
    throw ArgumentError(name, std::string(e.what()).substr(name.size()));
  }
}

std::u32string required_text(const InspectRequest& r, const std::vector<RequestError::Part>& mode) {
  if (!r.text) {
    std::vector<RequestError::Part> parts = mode;
    for (RequestError::Part p : {RequestError::Part(" needs "), RequestError::Part(ArgumentName{"text"}),
                                 RequestError::Part(" TEXT")})
      parts.push_back(std::move(p));
    throw RequestError(std::move(parts));
  }
  return argument_text("text", *r.text);
}

std::optional<int32_t> symbol_argument(const Vocab& vocab, const std::string& name, const std::optional<std::string>& utf8) {
  if (!utf8) return std::nullopt;
  return symbol_id(vocab, name, *utf8);
}

namespace {

// Head roles over the stated texts: --text-file's block_size windows (at most 200), else
// the probe prompts, else (only for the JSON's "roles") the inspected text alone. With
// ABLATE, each head's probe-accuracy drop too.
RoleReport head_roles(const InspectRequest& r, const Subject& s, const std::u32string& text, bool ablate) {
  const std::vector<ProbeItem> probes = role_probes(r, s);
  const std::string probe_name = r.probe ? *r.probe : s.probe_path;
  if (!r.text_file) return probe_role_report(*s.model, *s.vocab, probes, probe_name, text, ablate, r.mean_ablation);
  const int64_t block_size = s.model->config().block_size;
  RoleOptions options;
  options.probes = probes.empty() ? nullptr : &probes;
  const std::vector<int32_t> ids = s.vocab->encode(read_utf8_file(*r.text_file, "--text-file"), *r.text_file);
  options.texts = text_windows(ids, block_size, 200);
  options.texts_description = text_windows_description(options.texts.size(), block_size, *r.text_file);
  RoleReport report = score_head_roles(*s.model, *s.vocab, options);
  if (ablate && !probes.empty()) add_probe_ablation(*s.model, *s.vocab, probes, r.mean_ablation, report);
  return report;
}

// The model's heads selected by --layer and --head, checked against it.
void check_heads(const InspectRequest& r, const ModelConfig& c) {
  if (r.layer) check_index("layer", *r.layer, c.n_layer, "the model has " + std::to_string(c.n_layer) + " layers");
  if (r.head) check_index("head", *r.head, c.n_head, "the model has " + std::to_string(c.n_head) + " heads");
}

}  // namespace

// --- The default view: every selected head's projected_weights.

void check_patterns(const InspectRequest& r) {
  if (!r.text)
    throw RequestError({"inspect-heads needs ", ArgumentName{"text"}, " TEXT",
                        CommandLineOnly{" (or a mode: --roles, --circuits, --compare, ...)"}});
  if (r.format != "json")
    for (const auto& [name, given] : {std::pair{"probe", r.probe.has_value()}, {"text_file", r.text_file.has_value()}})
      if (given) throw RequestError({ArgumentName{name}, " is used by the default view only with ", ArgumentName{"format"}, " json (its roles)"});
}

Patterns compute_patterns(const InspectRequest& r, const Subject& s) {
  check_heads(r, s.model->config());
  const std::u32string text = argument_text("text", *r.text);
  if (r.position && !text.empty())
    check_index("position", *r.position, static_cast<int64_t>(text.size()),
                "the text has " + std::to_string(text.size()) + " symbols");
  Patterns p{inspect_heads(*s.model, *s.vocab, text, "text", {HeadSelection{r.layer, r.head}, true}), {}, std::nullopt};
  if (r.weights)
    for (const auto& h : p.inspection.heads) p.parameters.push_back(head_parameters(*s.model, h.layer, h.head));
  if (r.format == "json") {
    // The server's roles on its probe set, computed once; else as the command line gives them.
    if (s.cache && s.cache->pattern_roles) p.roles = *s.cache->pattern_roles;
    else p.roles = head_roles(r, s, p.inspection.text, false);
  }
  return p;
}

ModeOutput write_patterns(const InspectRequest& r, const Patterns& p) {
  ModeOutput out;
  if (r.svg) out.files.emplace_back(*r.svg, patterns_svg(p.inspection));
  const std::vector<HeadParameters>* shown = r.weights ? &p.parameters : nullptr;
  if (r.format == "json") {
    out.text = inspection_json(p.inspection, r.position, shown, &*p.roles).dump() + "\n";
    return out;
  }
  out.text = r.position ? format_position(p.inspection, *r.position, shown) : format_table(p.inspection, shown);
  if (r.svg) out.text += "\nheatmaps written to " + *r.svg + "\n";
  return out;
}

// --- --html FILE: the head explorer page.

// Refused before any work when the page cannot be written there (the options it does not
// show are refused by the table).
void check_explorer(const InspectRequest& r) {
  namespace fs = std::filesystem;
  const fs::path path(*r.html);
  try {
    refuse_non_regular_target(path);  // empty, "dir/", a folder, a device, a FIFO, a symlink
  } catch (const InputError& e) {
    throw ArgumentError("html", std::string(": ") + e.what());
  }
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw ArgumentError("html", " " + path.string() + ": the folder " + folder.string() + " does not exist");
  if (::access(folder.c_str(), W_OK) != 0)  // a read-only folder or file system: say so before the work
    throw IoError("cannot write " + path.string() + ": " + std::strerror(errno));
  if (r.replay && !r.run)
    throw RequestError({ArgumentName{"replay"}, " needs ", ArgumentName{"run"}, " DIR, a run directory with kept evaluations (DIR/evals/)"});
  if (r.run) {
    if (!fs::is_directory(*r.run, ec)) throw ArgumentError("run", " " + *r.run + " is not a run directory (not a folder)");
    if (!fs::exists(fs::path(*r.run) / "metrics.jsonl", ec)) throw ArgumentError("run", " " + *r.run + " holds no metrics.jsonl");
    if (r.replay && list_evaluation_models(*r.run).empty())
      throw RequestError({ArgumentName{"replay"}, ": " + *r.run + " holds no kept evaluation models (" +
                                                       (fs::path(*r.run) / kEvaluationsFolder).string() +
                                                       "/step_NNNNNNN.safetensors; runs keep them since issue 57)"});
  }
}

Explorer compute_explorer(const InspectRequest& r, const Subject& s) {
  const std::u32string text = required_text(r, {ArgumentName{"html"}});
  const std::vector<ProbeItem> probes = role_probes(r, s);
  ExplorerOptions options;
  options.source = s.source;
  options.probes = probes.empty() ? nullptr : &probes;
  options.probe_name = r.probe ? *r.probe : s.probe_path;
  options.mean_ablation = r.mean_ablation;
  options.position = r.position;
  if (r.run) options.run_dir = *r.run;
  // The slider's steps, at the positions the page traces (the query positions it shows).
  std::optional<ExplorerReplay> replay;
  if (r.replay) {
    const ModelConfig& c = s.model->config();
    const int64_t T = static_cast<int64_t>(encode_for_model(*s.model, *s.vocab, text, "text").size());
    if (r.position) check_index("position", *r.position, T, "the text has " + std::to_string(T) + " symbols");
    replay = explorer_replay(*r.run, text, r.probe, traced_positions(c.n_layer, c.n_head, T, r.position));
    options.replay = &*replay;
  }
  Explorer e{explorer_data(*s.model, *s.vocab, text, "text", options), probes.empty() ? "" : options.probe_name};
  if (replay) e.replay_steps = static_cast<int64_t>(replay->steps.size());
  return e;
}

ModeOutput write_explorer(const InspectRequest& r, const Explorer& e) {
  std::string page = explorer_html(e.data);
  std::string line = explorer_written_line(*r.html, page.size(), e.data, e.probe_name);
  if (e.replay_steps)  // "..., no probe\n" -> "..., no probe; a step slider over 79 evaluations of DIR\n"
    line.insert(line.size() - 1, "; a step slider over " + std::to_string(e.replay_steps) + " evaluations of " + *r.run);
  return ModeOutput{{{*r.html, std::move(page)}}, std::move(line)};
}

// --- --trace L.H --position P --text T.

void check_trace(const InspectRequest& r) {
  if (!r.trace) throw RequestError({ArgumentName{"trace"}, " needs L.H, the head to trace"});
  required_text(r, {ArgumentName{"trace"}});
  if (!r.position) throw RequestError({ArgumentName{"trace"}, " needs ", ArgumentName{"position"}, " P, the query position to trace"});
  parse_head_name(*r.trace, "trace");
}

HeadTrace compute_trace(const InspectRequest& r, const Subject& s) {
  const auto [layer, head] = parse_head_name(*r.trace, "trace");
  return trace_head(*s.model, *s.vocab, argument_text("text", *r.text), "text", layer, head, *r.position,
                    std::min<int64_t>(r.top, 10));
}

// --- --roles.

RoleReport compute_roles(const InspectRequest& r, const Subject& s) {
  if (s.cache) {
    if (!s.cache->roles)
      throw InputError("no probe set: roles are scored on one (start serve with --probe FILE, or a checkpoint whose "
                       "config names data.probe_path)");
    return *s.cache->roles;
  }
  return head_roles(r, s, std::u32string(), true);
}

// --- --circuits --layer L --head H.

HeadCircuits compute_circuits(const InspectRequest& r, const Subject& s) {
  check_heads(r, s.model->config());
  return head_circuits(*s.model, *s.vocab, *r.layer, *r.head);
}

ModeOutput write_circuits(const InspectRequest& r, const HeadCircuits& c) {
  ModeOutput out;
  if (r.svg) out.files.emplace_back(*r.svg, qk_ov_svg(c));
  out.text = format_circuits(c, r.top);
  if (r.svg) out.text += "\nheatmaps written to " + *r.svg + "\n";
  return out;
}

// --- --compare A B: match A's heads to B's on the --text, else on the probe prompts
// (--probe or A's data.probe_path) that both vocabularies hold, at most 100, with each
// head's role.

ComparisonReport compute_comparison(const InspectRequest& r, const Subject&) {
  const std::u32string text = argument_text("text", r.text.value_or(""));
  LoadedModel a = load_model(r.compare.at(0)), b = load_model(r.compare.at(1));
  const ModelConfig &ca = a.model.config(), &cb = b.model.config();
  const int64_t block = std::min(ca.block_size, cb.block_size);
  std::vector<std::u32string> texts;
  std::string described;
  const std::string probe_path = r.probe ? *r.probe : a.config.data.probe_path;
  std::vector<ProbeItem> probes;
  if (!probe_path.empty()) probes = load_probe_set(probe_path);
  std::vector<std::vector<int32_t>> ids_a, ids_b;
  if (r.text) {
    // As in every other mode: an empty text, or one longer than either model's block_size,
    // is refused (it was cut quietly, and an empty one failed an internal check).
    ids_a.push_back(encode_for_model(a.model, a.vocab, text, "text"));
    ids_b.push_back(encode_for_model(b.model, b.vocab, text, "text"));
    texts.push_back(text);
    described = compared_text_description();
  } else {
    for (const ProbeItem& item : probes) {
      const bool known = a.vocab.find_all(item.prompt) && b.vocab.find_all(item.prompt);
      if (known && texts.size() < 100)
        texts.push_back(item.prompt.substr(item.prompt.size() > static_cast<size_t>(block) ? item.prompt.size() - block : 0));
    }
    described = compared_prompts_description(texts.size(), probe_path);
  }
  if (texts.empty())
    throw RequestError({ArgumentName{"compare"}, " needs a ", ArgumentName{"text"}, ", or a probe set (",
                        ArgumentName{"probe"}, " FILE) both models can read"});
  if (!r.text)
    for (const auto& t : texts) {
      ids_a.push_back(a.vocab.encode(t, "probe prompt"));
      ids_b.push_back(b.vocab.encode(t, "probe prompt"));
    }
  ComparisonReport report{r.compare.at(0), r.compare.at(1), described, compare_heads(a.model, b.model, ids_a, ids_b), {}, {}};
  auto roles_of = [&](LoadedModel& m, const std::vector<std::vector<int32_t>>& ids) {
    RoleOptions options;
    options.texts = ids;
    options.probes = probes.empty() ? nullptr : &probes;
    return score_head_roles(m.model, m.vocab, options);
  };
  report.roles_a = roles_of(a, ids_a);
  report.roles_b = roles_of(b, ids_b);
  return report;
}

}  // namespace mg
