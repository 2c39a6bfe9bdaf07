// inspect-heads --circuit (issue 58): each question kind's circuit as edges, found by path
// patching on the probe's pairs and proven (interp/circuit_edges.h); --score-split L.H:
// one head's attention scores on --text split into source pairs (interp/score_split.h).
#include "cli/inspect_heads.h"
#include "core/error.h"
#include "data/utf8.h"
#include "interp/trace.h"
#include "report/edge_circuit_format.h"

namespace mg::cli {

void add_edge_circuit_options(CLI::App& cmd, InspectHeadsOptions& o) {
  cmd.add_flag("--circuit", o.circuit,
               "Each question kind's circuit on --probe FILE (default: the config's data.probe_path): the edges between "
               "the embeddings, each head's q, k and v inputs and output, each MLP and the logits that path patching "
               "keeps (ACDC, --threshold), with its faithfulness, completeness, minimality and EAP's estimates");
  cmd.add_option("--threshold", o.threshold,
                 "With --circuit: ACDC's tau, the change of faithfulness under which an edge is removed (default 0.01)")
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--score-split", o.score_split,
                 "L.H: head H of layer L's attention score at --position P of --text on each key, split into query-side "
                 "source x key-side source (embeddings, each earlier head, each earlier MLP, ln1's bias)");
}

void edge_circuit_mode(const InspectHeadsOptions& o) {
  if (o.swap && o.swap != "value" && o.swap != "key") throw InputError("--swap must be value or key");
  Subject s = load_subject(o);
  const std::string probe_path = o.probe ? *o.probe : s.probe_path;
  if (probe_path.empty()) throw InputError("--circuit needs --probe FILE (the model's config names no data.probe_path)");
  if (s.vocab.size() < 2)
    throw InputError("the model's vocabulary has 1 symbol: there is no other symbol to measure the answer's logit against");
  CircuitOptions options;
  if (o.threshold) options.threshold = *o.threshold;
  const EdgeCircuits c = find_probe_circuits(s.model, s.vocab, readable_probe_set(probe_path, s.vocab), options,
                                             o.swap == "key" ? Swap::key : Swap::value);
  print(o.format == "json" ? edge_circuits_json(c).dump() + "\n" : format_edge_circuits(c, o.top));
}

void score_split_mode(const InspectHeadsOptions& o) {
  const auto [layer, head] = parse_head_name(*o.score_split, "--score-split");  // before loading the model
  if (!o.text_given) throw InputError("--score-split needs --text TEXT");
  Subject s = load_subject(o);
  const ScoreSplit split = split_scores(s.model, s.vocab, decode_utf8(o.text, "--text"), "--text", layer, head, o.position);
  print(o.format == "json" ? score_split_json(split).dump() + "\n" : format_score_split(split, o.top));
}

}  // namespace mg::cli
