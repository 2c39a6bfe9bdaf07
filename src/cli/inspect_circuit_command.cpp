// inspect-heads' circuit modes (issue 30): --attribution (direct logit attribution),
// --logit-lens, --composition and --patch (activation patching). Each mode is a function
// of the options it reads; which those are is inspect_modes.cpp's table.
#include <cstdio>

#include "cli/inspect_heads.h"
#include "core/error.h"
#include "data/probe.h"
#include "data/utf8.h"
#include "interp/logit_choice.h"
#include "io/atomic_file.h"
#include "report/circuit_format.h"
#include "report/explain_format.h"
#include "report/patching_svg.h"

namespace mg::cli {
namespace {

// The probe modes build each item's own question: the single-text inputs are refused.
void refuse_with_probe(const char* mode, std::initializer_list<std::pair<const char*, bool>> inputs) {
  for (const auto& [name, set] : inputs)
    if (set) throw InputError(std::string(name) + " is not used by " + mode + " --probe (each item brings its own)");
}

}  // namespace

void add_circuit_options(CLI::App& cmd, InspectHeadsOptions& o) {
  cmd.add_flag("--attribution", o.attribution,
               "Direct logit attribution at --position P of --text: each part of the final residual stream (embeddings, "
               "each head, each MLP, ln_f's bias) and its share of the answer's logit and of the difference against "
               "--against (with --probe FILE: the mean per question kind)");
  cmd.add_flag("--logit-lens", o.logit_lens,
               "The residual stream at --position P of --text after each block, read through ln_f and the head: the "
               "top symbols and the answer's rank");
  cmd.add_flag("--composition", o.composition,
               "Q-, K- and V-composition scores of every earlier head with every later head, beside the mean of random "
               "matrices of the same shapes");
  cmd.add_flag("--patch", o.patch,
               "Activation patching: run --corrupt with one activation from --clean (each head's output, the stream at "
               "each layer and position) and print the fraction of the logit difference restored (with --probe FILE: "
               "per kind, each item's fact swapped)");
  cmd.add_option("--answer", o.answer, "With --attribution, --logit-lens, --patch: the answer symbol (default: the "
                                       "model's choice)");
  cmd.add_option("--against", o.against, "With --attribution, --patch: the competing symbol (default: the best other "
                                         "symbol; with --patch the corrupt run's choice)");
  cmd.add_option("--clean", o.clean, "With --patch: the clean text");
  cmd.add_option("--corrupt", o.corrupt, "With --patch: the corrupt text, as long as --clean");
  cmd.add_option("--swap", o.swap,
                 "With --patch --probe: what each item's corrupt prompt changes in the answer's fact: value (default; "
                 "the answer symbol, for the head that writes it) or key (every symbol the question could match the "
                 "fact on, for the head that carries it to the answer)")
      ->check(CLI::IsMember({"value", "key"}));
  cmd.add_flag("--explain", o.explain,
               "Each question kind's chain, found on --probe FILE (default: the config's data.probe_path): the head "
               "that writes the answer, the earlier head that carries the key to it, the MLPs' part, with the numbers "
               "of --attribution, --patch --swap value|key and --composition that chose them");
}

void attribution_mode(const InspectHeadsOptions& o) {
  Subject s = load_subject(o);
  const bool json = o.format == "json";
  if (o.probe) {
    refuse_with_probe("--attribution", {{"--text", o.text_given}, {"--position", o.position.has_value()},
                                        {"--answer", o.answer.has_value()}, {"--against", o.against.has_value()}});
    const ProbeAttribution a = attribute_probe(s.model, s.vocab, readable_probe_set(*o.probe, s.vocab));
    print(json ? probe_attribution_json(a).dump() + "\n" : format_probe_attribution(a));
    return;
  }
  print(json ? attribution_json_text(o, inspect_model(s)) : format_attribution(attribution_for(o, inspect_model(s))));
}

void logit_lens_mode(const InspectHeadsOptions& o) {
  if (!o.text_given) throw InputError("--logit-lens needs --text TEXT");
  Subject s = load_subject(o);
  print(o.format == "json" ? logit_lens_json_text(o, inspect_model(s)) : format_logit_lens(logit_lens_for(o, inspect_model(s))));
}

void composition_mode(const InspectHeadsOptions& o) {
  Subject s = load_subject(o);
  print(o.format == "json" ? composition_json_text(inspect_model(s))
                           : format_composition(composition_scores(s.model), o.top));
}

void explain_mode(const InspectHeadsOptions& o) {
  Subject s = load_subject(o);
  const std::string probe_path = o.probe ? *o.probe : s.probe_path;
  if (probe_path.empty())
    throw InputError("--explain needs --probe FILE (the model's config names no data.probe_path)");
  const std::vector<ProbeItem> probes = readable_probe_set(probe_path, s.vocab);
  const Explanation e = explain_chains(s.model, s.vocab, probes);
  print(o.format == "json" ? explanation_json(e).dump() + "\n" : format_explanation(e));
}

void patch_mode(const InspectHeadsOptions& o) {
  Subject s = load_subject(o);
  const bool json = o.format == "json";
  if (o.probe) {
    refuse_with_probe("--patch", {{"--clean", o.clean.has_value()}, {"--corrupt", o.corrupt.has_value()},
                                  {"--answer", o.answer.has_value()}, {"--against", o.against.has_value()},
                                  {"--svg", o.svg.has_value()}});
    // As --patch with texts: a one-symbol vocabulary leaves no competitor to patch toward.
    if (s.vocab.size() < 2)
      throw InputError("the model's vocabulary has " + std::to_string(s.vocab.size()) +
                       " symbol: there is no other symbol to measure the answer's logit against");
    const Swap swap = o.swap == "key" ? Swap::key : Swap::value;
    const ProbePatching p = patch_probe(s.model, s.vocab, readable_probe_set(*o.probe, s.vocab), swap);
    print(json ? probe_patching_json(p).dump() + "\n" : format_probe_patching(p));
    return;
  }
  if (!o.clean || !o.corrupt) throw InputError("--patch needs --clean TEXT and --corrupt TEXT (or --probe FILE)");
  if (o.swap) throw InputError("--swap builds each probe item's corruption (--patch --probe FILE); with --clean and "
                               "--corrupt the corruption is the text given");
  const Patching p = patching_for(o, inspect_model(s));
  if (o.svg) write_text_atomically(*o.svg, patching_svg(p));  // the picture first, as --svg elsewhere
  print(json ? patching_json_text(p) : format_patching(p, o.top));
  // The text says it in its "warning:" line; JSON, read by a program, says it in "warning"
  // and here, where a person running it sees it.
  if (json && patching_gap_too_small(p)) std::fprintf(stderr, "mini-gpt: warning: %s\n", patching_gap_warning(p).c_str());
  if (o.svg && !json) print("heatmap written to " + *o.svg + "\n");
}

}  // namespace mg::cli
