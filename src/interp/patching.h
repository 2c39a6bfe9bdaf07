// Activation patching (inspect-heads --patch; Meng et al. 2022, Wang et al. 2022 as
// TransformerLens's patching utilities run it): run the corrupt text with one activation
// taken from the clean text's run, and measure how much of the clean logit difference
// comes back:
//   restored = (patched - corrupt) / (clean - corrupt),
// with each of the three the logit difference logit(answer) - logit(against) at the last
// position. 1: the activation carries everything the corruption changed; 0: nothing.
// Three sweeps: each head's output (blocks.L.attn.hook_z) at every position and at each
// position alone, and the residual stream entering each block (blocks.L.hook_resid_pre) at
// each position alone. B is 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

struct Patching {
  std::vector<std::string> clean_tokens, corrupt_tokens;  // [T] each
  int64_t n_layer = 0, n_head = 0, T = 0;
  int32_t answer = 0, against = 0;
  std::string answer_symbol, against_symbol;
  double clean = 0.0, corrupt = 0.0;  // the logit differences of the two unpatched runs
  std::vector<double> heads;          // [n_layer * n_head] restored, patching one head's hook_z
  std::vector<double> head_positions; // [n_layer * n_head * T] restored, patching one head's hook_z at one position
  std::vector<double> streams;        // [n_layer * T] restored, patching hook_resid_pre(L) at one position
  std::vector<double> whole_streams;  // [n_layer] restored, patching hook_resid_pre(L) at every position
};

// The least gap |clean - corrupt| at which a restored share is a measure: 1 nat of logit
// difference, the corruption changing the odds of the answer against its competitor by a
// factor e. Below it the denominator is of the size by which single heads move the
// difference anyway, so a head that moves it by a few tenths reads as a share far outside
// [-1, 1] (a gap of 0.40 made a head "restore +1.90"): the writers warn, and keep the numbers.
constexpr double kMinPatchingGap = 1.0;
inline bool patching_gap_too_small(const Patching& p) {
  return !(p.clean - p.corrupt >= kMinPatchingGap || p.corrupt - p.clean >= kMinPatchingGap);
}

// ANSWER default: the clean run's choice; AGAINST default: the corrupt run's choice, or,
// when that is the answer too, the clean run's best other symbol. InputError: a text
// (CLEAN_WHAT, CORRUPT_WHAT name them) empty, too long or with an unknown symbol; texts of
// unequal length; answer equal to against; clean and corrupt giving the same difference.
Patching patch_activations(const Gpt& model, const Vocab& vocab, std::u32string_view clean, std::u32string_view corrupt,
                           std::optional<int32_t> answer, std::optional<int32_t> against);

// The probe mode builds each item's corrupt prompt itself, changing one symbol of the fact
// the answer is read from, so that each link of a chain can be targeted:
// - Swap::value: the answer's fact changed. The symbol at the item's "source" is replaced
//   by the answer of another item of the same kind (the first in the file that differs and
//   is nowhere in the prompt), and that replacement is the competitor. The head that reads
//   the answer and writes it (an induction head's second half) is what this corrupts.
// - Swap::key: the fact no longer matches the question. The key is every symbol that tells
//   the answer's fact apart: for each kind, each offset k before the source (up to 8) at
//   which every item's symbol occurs once in its prompt up to the source and is also the
//   question's symbol k before its end (on corpus v5: colour: the verb's two characters and
//   the name; what: those and the colour; who: the colour); or, when the kind's items name
//   their key (the probe's "key", corpus v6: the name, or for who and holder the object's
//   first symbol, which may follow the source), those symbols. A model may match on any one of them, so
//   all are replaced, by the symbols at the same offsets of one other item (the first whose
//   symbols there all differ and are nowhere in the prompt); the answer stays, and the
//   competitor is the corrupt run's choice (or, when that is the answer, the clean run's
//   best other symbol). The head that carries the key onto the answer's source (an
//   induction head's first half) is what
//   this corrupts.
// Each head's restored fraction per kind is the sum over the kind's items of (patched -
// corrupt) over the sum of (clean - corrupt): a mean that an item whose corruption barely
// moves the difference (a denominator near 0) cannot swamp. Items without a source (or
// whose changed symbol falls before their last block_size symbols), with symbols outside
// the vocabulary, with no replacement, or whose two runs give the same difference, are
// skipped and counted.
enum class Swap { value, key };
const char* swap_name(Swap swap);  // "value", "key"

struct KindPatching {
  std::string kind;
  int64_t items = 0;
  std::vector<double> heads;  // [n_layer * n_head] restored over the kind's items
  double gap = 0.0;           // sum over the items of clean - corrupt
  std::vector<int64_t> key_offsets;  // Swap::key: the key's offsets from the source, > 0 before it (none found: empty)
};
struct ProbePatching {
  Swap swap = Swap::value;
  int64_t n_layer = 0, n_head = 0, skipped = 0;
  std::vector<KindPatching> kinds;  // in order of first appearance
};
ProbePatching patch_probe(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                          Swap swap = Swap::value);

// The corrupt partner of a probe item (the probe mode's rules above), cropped to the last
// block_size symbols like the clean prompt; nothing when the item has none.
struct CorruptPrompt {
  std::u32string clean, corrupt;
  std::vector<int64_t> positions;  // the changed symbols' indices in clean and corrupt, nearest the source first
  std::u32string replacements;     // the symbol written at each (Swap::value: one, the competitor)
};
std::optional<CorruptPrompt> corrupt_prompt(const ProbeItem& item, const std::vector<ProbeItem>& probes,
                                            const Vocab& vocab, int64_t block_size, Swap swap = Swap::value);

// The same for many items of one probe set: each kind's offsets and its distinct candidate
// replacements (the symbols other items of the kind hold there, in file order) found once,
// in one pass, so that patching a whole probe set is linear in its rows (40,000 duplicate
// rows are one candidate) and corrupt_prompt's answers are unchanged.
class CorruptionCandidates {
 public:
  CorruptionCandidates(const std::vector<ProbeItem>& probes, Swap swap);
  std::optional<CorruptPrompt> corrupt(const ProbeItem& item, const Vocab& vocab, int64_t block_size) const;
  const std::vector<int64_t>& offsets(const std::string& kind) const;  // key_offsets' (Swap::value: {0})

 private:
  struct Kind {
    std::vector<int64_t> offsets;
    std::vector<std::u32string> candidates;  // [distinct] each offsets.size() symbols
  };
  std::unordered_map<std::string, Kind> kinds_;
};

// Swap::key's offsets for KIND, nearest first: when every item of the kind names its key
// (the probe's "key"), each k in [-8, 8] at which all of them name prompt[source - k] (k < 0:
// after the source); otherwise each k in [1, 8] at which every item of the kind with a
// source has prompt[source - k] once in prompt[0, source) and equal to the question's
// symbol k before the prompt's end. Empty when there is none.
std::vector<int64_t> key_offsets(const std::vector<ProbeItem>& probes, const std::string& kind);

}  // namespace mg
