// The whole circuit of a question kind, as edges, found by patching them one at a time
// (inspect-heads --circuit; Wang et al. 2022, "Interpretability in the Wild", path
// patching; Conmy et al. 2023, ACDC) and proven by faithfulness, completeness and
// minimality; beside it, edge attribution patching (Syed et al. 2023, EAP), the gradient
// approximation of the same edge effects, and how well it ranks them.
//
// The graph. The residual stream entering any reader is exactly the sum of what earlier
// components wrote: the embeddings (token + learned position), each head's output through
// its columns of Wo (this model's attention has no out-projection bias), each MLP's output
// (b2 included). So every reader's input can be assembled per sender, and a sender's edge
// to one reader changed while its edges to the others are not:
//   senders   embed, then per layer L: L.H0 .. L.H{H-1}, L.mlp
//   receivers per layer L: each head's q, k and v inputs (each its own ln1 of its own
//             input, then its slice of Wq, Wk or Wv: TransformerLens's split q/k/v input),
//             L.mlp's input; last, the logits (ln_f, the unembedding)
//   edges     every sender before the receiver: into layer L's heads, embed and every
//             node of the layers before L; into L.mlp, those and layer L's heads; into the
//             logits, every sender. 4 layers, 2 heads: 132 + 30 + 13 = 175 edges.
// Edges are over all positions at once (ACDC's graph), one per sender and receiver.
//
// Ablation: resample ablation from the paired corrupt prompt, as path patching and ACDC
// on IOI do. An edge outside the circuit carries the sender's output from the corrupt
// prompt's own unpatched run (recorded once), an edge inside it the sender's output in
// the run being made. Every edge present gives the clean run, none the corrupt run.
//
// The metric, per kind: the logit difference M = logit(answer) - logit(against) at each
// item's last position, and the share of the clean-corrupt gap a circuit C keeps,
//   F(C) = sum over items (M_C - M_corrupt) / sum over items (M_clean - M_corrupt),
// the same mean as --patch --probe's restored fraction (an item whose corruption barely
// moves M cannot swamp it). F(everything) = 1, F(nothing) = 0.
//
// The search (ACDC, Conmy et al. Algorithm 1, with the absolute-value threshold of their
// code's abs_value_threshold): receivers from the logits back to layer 0, each one's
// senders latest first; an edge is removed for good when removing it from the current
// circuit moves F by less than the threshold tau. An edge whose sender feeds nothing left
// in the circuit has no effect and goes without a forward.
//
// The proof, per kind:
//   faithfulness  F(C): the circuit alone, everything else resample-ablated;
//   completeness  for a few subsets K (each node of the circuit on its own, and the
//                 circuit's nodes in seeded random halves), F(C \ K) beside F(full \ K):
//                 a complete circuit loses what the model loses (Wang et al.'s
//                 incompleteness |F(C \ K) - F(full \ K)|);
//   minimality    each kept edge's own effect, F(C) - F(C \ {e}).
// The exact edge effect, the quantity EAP approximates: F(full) - F(full \ {e}), each
// edge removed from the whole model alone. EAP: (clean_s - corrupt_s) . dM/d(input_r),
// summed over positions and items, one forward and one backward per kind's batch, divided
// by the gap. Their agreement: Spearman's rho and Kendall's tau-b on |effect|, the order
// in which either would pick edges.
//
// B items of a kind run as one batch, padded on the right to the longest: attention is
// causal, so a padded position changes nothing before it, and M is read at each item's
// own last position.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "interp/patching.h"
#include "nn/gpt.h"

namespace mg {

// Which input of a receiver: a head's query, key or value, an MLP's, the logits'.
enum class EdgeInput { q, k, v, mlp, logits };
const char* edge_input_name(EdgeInput input);  // "q", "k", "v", "mlp", "logits"

struct EdgeGraph {
  struct Sender {
    std::string name;  // "embed", "L1.H0", "L1.mlp"
    int64_t layer = -1, head = -1;  // -1 where none (embed; head for an MLP)
  };
  struct Receiver {
    std::string name;  // "L1.H0.q", "L1.mlp", "logits"
    int64_t layer = -1, head = -1;
    EdgeInput input = EdgeInput::logits;
  };
  struct Edge {
    int64_t sender = 0, receiver = 0;  // indices into senders, receivers
  };
  std::vector<Sender> senders;      // in the forward's order
  std::vector<Receiver> receivers;  // in the forward's order, the logits last
  std::vector<Edge> edges;          // by receiver, then sender
};
EdgeGraph edge_graph(const ModelConfig& config);

// One clean prompt and its corrupt partner (equal lengths, at most block_size), with the
// two symbols whose logit difference is measured at the last position.
struct CircuitPair {
  std::vector<int32_t> clean, corrupt;
  int32_t answer = 0, against = 0;
};

struct CircuitOptions {
  double threshold = 0.01;    // ACDC's tau, in units of F
  int64_t random_subsets = 4; // completeness: seeded random halves of the circuit's nodes
  uint64_t seed = 1;
};

struct CircuitEdgeResult {
  int64_t edge = 0;            // into EdgeGraph::edges
  bool kept = false;           // in the circuit
  double acdc = 0.0;           // F(current) - F(current without it), when ACDC tried it
  double exact = 0.0;          // F(full) - F(full without it)
  double eap = 0.0;            // EAP's estimate of exact
  std::optional<double> own;   // kept edges: minimality, F(C) - F(C without it)
};

struct CompletenessSubset {
  std::vector<std::string> nodes;  // the senders removed (all their edges)
  double circuit = 0.0;            // F(C \ K)
  double model = 0.0;              // F(full \ K)
};

struct KindCircuit {
  std::string kind;
  int64_t items = 0;
  double clean = 0.0, corrupt = 0.0;  // mean logit differences of the two unpatched runs
  double faithfulness = 0.0;          // F(C)
  int64_t kept = 0;                   // edges in C
  std::vector<CircuitEdgeResult> edges;  // every edge of the graph, in its order
  std::vector<CompletenessSubset> completeness;
  double incompleteness = 0.0;        // max |circuit - model| over the subsets
  double smallest_own = 0.0;          // min over kept edges of own (0 when none kept)
  double spearman = 0.0, kendall = 0.0;  // EAP against exact, on |effect|
  int64_t forwards = 0;               // batched forwards the search made
};

struct EdgeCircuits {
  EdgeGraph graph;
  double threshold = 0.0;
  Swap swap = Swap::value;
  int64_t skipped = 0;            // probe items without a corrupt partner (or no gap)
  std::vector<KindCircuit> kinds; // in the probe's order of first appearance
};

// The circuit, its proof and EAP for one set of pairs (one kind). InputError: no pairs,
// a pair of unequal lengths or past block_size, answer equal to against, or a set whose
// summed clean and corrupt differences are equal (no gap for F to measure).
KindCircuit find_circuit(const Gpt& model, const std::vector<CircuitPair>& pairs, const CircuitOptions& options);

// Every kind of a probe set, its pairs built as --patch --probe builds them (SWAP), the
// competitor as there too.
EdgeCircuits find_probe_circuits(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                                 const CircuitOptions& options, Swap swap = Swap::value);

// F of an arbitrary set of heads' edges (a chain): the circuit made of every edge into and
// out of the named heads that lies on a path from the embeddings to the logits through
// them and the MLPs (every MLP edge kept): what --explain's chain (carrier, writer, the
// MLPs) explains on PAIRS. heads as (layer, head).
double chain_faithfulness(const Gpt& model, const std::vector<CircuitPair>& pairs,
                          const std::vector<std::pair<int64_t, int64_t>>& heads);

// The pairs of one kind of a probe set, as find_probe_circuits builds them (skipped: those
// without a partner or whose two runs give the same difference).
std::vector<std::pair<std::string, std::vector<CircuitPair>>> probe_circuit_pairs(const Gpt& model, const Vocab& vocab,
                                                                                   const std::vector<ProbeItem>& probes,
                                                                                   Swap swap, int64_t& skipped);

// Rank agreement of two equally long lists (ties share their mean rank).
double spearman_rho(const std::vector<double>& a, const std::vector<double>& b);
double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace mg
