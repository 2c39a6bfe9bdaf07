// inspect-heads --explain: explain.h says what is picked and why.
#include "interp/explain.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "interp/circuit_edges.h"

namespace mg {
namespace {

// The entries of KINDS by name, so that each kind is found in one lookup (a probe set with
// a distinct kind per item stays linear).
template <typename Kind>
class KindIndex {
 public:
  explicit KindIndex(const std::vector<Kind>& kinds) {
    for (const Kind& k : kinds) index_.try_emplace(k.kind, &k);
  }
  const Kind* find(const std::string& name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string, const Kind*> index_;
};

const CompositionPair* find_pair(const CompositionScores& c, const ChainHead& writer, const ChainHead& reader) {
  for (const CompositionPair& p : c.pairs)
    if (p.layer1 == writer.layer && p.head1 == writer.head && p.layer2 == reader.layer && p.head2 == reader.head)
      return &p;
  return nullptr;
}

}  // namespace

Explanation explain_chains(const ProbeScore& score, const ProbeAttribution& attribution, const ProbePatching& value,
                           const ProbePatching& key, const CompositionScores& composition) {
  Explanation out;
  out.n_layer = value.n_layer;
  out.n_head = value.n_head;
  out.skipped_attribution = attribution.skipped;
  out.skipped_value = value.skipped;
  out.skipped_key = key.skipped;
  const KindIndex<KindAttribution> attribution_kinds(attribution.kinds);
  const KindIndex<KindPatching> value_kinds(value.kinds), key_kinds(key.kinds);
  for (size_t k = 0; k < score.kinds.size(); ++k) {
    KindChain chain;
    chain.kind = score.kinds[k];
    chain.items = score.kind_items[k];
    chain.accuracy = score.kind_accuracy(k);
    chain.tagged = score.tagged(k);
    if (chain.tagged) {
      chain.no_distractor_accuracy = score.alone_accuracy(k);
      chain.distractor_accuracy = score.distracted_accuracy(k);
      chain.cue = score.cues[k];
    }
    const bool binds = !chain.tagged || score.distracted_items[k] == 0 || chain.distractor_accuracy >= kLearnedAccuracy;
    chain.learned = chain.accuracy >= kLearnedAccuracy && binds;
    chain.shortcut = !binds && score.alone_items[k] > 0 && chain.no_distractor_accuracy >= kLearnedAccuracy;

    // The writer: the largest mean direct logit attribution among the heads.
    if (const KindAttribution* a = attribution_kinds.find(chain.kind)) {
      chain.difference = a->difference;
      for (size_t p = 0; p < attribution.part_names.size(); ++p) {
        const auto [layer, head] = attribution.part_heads[p];
        const std::string& name = attribution.part_names[p];
        if (layer >= 0 && head >= 0) {
          if (!chain.writer || a->parts[p] > chain.writer_attribution) {
            chain.writer = ChainHead{layer, head};
            chain.writer_attribution = a->parts[p];
          }
        } else if (name.size() > 4 && name.compare(name.size() - 4, 4, ".mlp") == 0) {
          chain.mlp_attribution += a->parts[p];
        }
      }
    }
    if (chain.writer) {
      const int64_t writer_index = chain.writer->layer * value.n_head + chain.writer->head;
      if (const KindPatching* v = value_kinds.find(chain.kind)) chain.writer_restores = v->heads[writer_index];
      // The carrier: earlier heads that restore with the key swapped, ranked by how much the
      // writer's queries or keys read them.
      if (const KindPatching* kp = key_kinds.find(chain.kind)) {
        for (int64_t l = 0; l < chain.writer->layer; ++l)
          for (int64_t h = 0; h < key.n_head; ++h) {
            const double restores = kp->heads[l * key.n_head + h];
            if (!(restores >= kCarrierRestores)) continue;
            const CompositionPair* pair = find_pair(composition, ChainHead{l, h}, *chain.writer);
            MG_CHECK(pair != nullptr, "explain: no composition score for an earlier head");
            chain.candidates.push_back({ChainHead{l, h}, restores, pair->q, pair->k});
          }
        std::stable_sort(chain.candidates.begin(), chain.candidates.end(), [](const auto& a, const auto& b) {
          return std::max(a.q, a.k) > std::max(b.q, b.k);
        });
        for (const KindChain::Candidate& c : chain.candidates) {
          const bool k_reads = c.k >= c.q;
          const double score_value = k_reads ? c.k : c.q;
          const double baseline = k_reads ? composition.baseline_k : composition.baseline_q;
          if (score_value > baseline) {
            chain.carrier = c.head;
            chain.carrier_restores = c.restores;
            chain.composition = k_reads ? 'K' : 'Q';
            chain.composition_score = score_value;
            chain.baseline = baseline;
            break;
          }
        }
      }
    }
    out.kinds.push_back(std::move(chain));
  }
  return out;
}

Explanation explain_chains(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes) {
  const ProbeScore score = score_probe(model, vocab, probes);
  const ProbeAttribution attribution = attribute_probe(model, vocab, probes);
  const ProbePatching value = patch_probe(model, vocab, probes, Swap::value);
  const ProbePatching key = patch_probe(model, vocab, probes, Swap::key);
  const CompositionScores composition = composition_scores(model);
  Explanation e = explain_chains(score, attribution, value, key, composition);
  int64_t skipped = 0;
  for (const Swap swap : {Swap::value, Swap::key})
    for (auto& [kind, pairs] : probe_circuit_pairs(model, vocab, probes, swap, skipped))
      for (KindChain& chain : e.kinds) {
        if (chain.kind != kind || !chain.writer) continue;
        std::vector<std::pair<int64_t, int64_t>> heads = {{chain.writer->layer, chain.writer->head}};
        if (chain.carrier) heads.emplace_back(chain.carrier->layer, chain.carrier->head);
        try {
          (swap == Swap::value ? chain.chain_faithfulness : chain.chain_key_faithfulness) =
              chain_faithfulness(model, pairs, heads);
        } catch (const InputError&) {  // the kind's pairs leave no gap: nothing to explain, no number
        }
      }
  return e;
}

}  // namespace mg
