// Activation patching through the forward's edits (interp/patching.h): one recording
// run of the clean text, then one corrupt run per patched activation, each with a single
// edit (nn/hooks.h copy_head, copy_position).
#include "interp/patching.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "interp/logit_choice.h"
#include "interp/patterns.h"

namespace mg {
namespace {

// logit(answer) - logit(against) at the last position of logits [1,T,V].
double difference(const Tensor& logits, LogitPair pair) {
  const int64_t T = logits.dim(1), V = logits.dim(2);
  const float* row = logits.data() + (T - 1) * V;
  const double d = static_cast<double>(row[pair.answer]) - static_cast<double>(row[pair.against]);
  require_finite(d, "the logit difference patched");
  return d;
}

Tensor run(const Gpt& model, const std::vector<int32_t>& ids, ForwardHooks* hooks) {
  return model.forward(ids, 1, static_cast<int64_t>(ids.size()), {.hooks = hooks}).value();
}

// Every sweep (or the whole heads alone) on two texts of equal length, with the pair fixed.
Patching sweep(const Gpt& model, const std::vector<int32_t>& clean, const std::vector<int32_t>& corrupt, LogitPair pair,
               double clean_difference, double corrupt_difference, bool streams) {
  const ModelConfig& c = model.config();
  const int64_t L = c.n_layer, H = c.n_head, T = static_cast<int64_t>(clean.size());
  Patching r;
  r.n_layer = L;
  r.n_head = H;
  r.T = T;
  r.answer = pair.answer;
  r.against = pair.against;
  r.clean = clean_difference;
  r.corrupt = corrupt_difference;
  // The clean run's activations. The streams come from a run that records nothing else,
  // on the fused path the unpatched runs take (recording hook_z takes the op-by-op one,
  // equal to float rounding): a stream patched whole then gives the clean logits bit for bit.
  ForwardHooks source, stream_source;
  for (int64_t l = 0; l < L; ++l) {
    source.record(hook::z(l));
    stream_source.record(hook::resid_pre(l));
  }
  run(model, clean, &source);
  if (streams) run(model, clean, &stream_source);
  auto restored = [&](ForwardHooks& patch) {
    return (difference(run(model, corrupt, &patch), pair) - corrupt_difference) / (clean_difference - corrupt_difference);
  };
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h) {
      ForwardHooks patch;
      patch.edit(hook::z(l), copy_head(h, source[hook::z(l)]));
      r.heads.push_back(restored(patch));
    }
  if (!streams) return r;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        ForwardHooks patch;
        patch.edit(hook::z(l), copy_head(h, source[hook::z(l)], t));
        r.head_positions.push_back(restored(patch));
      }
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t t = 0; t < T; ++t) {
      ForwardHooks patch;
      patch.edit(hook::resid_pre(l), copy_position(t, stream_source[hook::resid_pre(l)]));
      r.streams.push_back(restored(patch));
    }
    ForwardHooks patch;
    patch.edit(hook::resid_pre(l), copy_position(-1, stream_source[hook::resid_pre(l)]));
    r.whole_streams.push_back(restored(patch));
  }
  return r;
}

}  // namespace

Patching patch_activations(const Gpt& model, const Vocab& vocab, std::u32string_view clean_text,
                           std::u32string_view corrupt_text, std::optional<int32_t> answer,
                           std::optional<int32_t> against) {
  const std::vector<int32_t> clean = encode_for_model(model, vocab, clean_text, "clean");
  const std::vector<int32_t> corrupt = encode_for_model(model, vocab, corrupt_text, "corrupt");
  if (clean.size() != corrupt.size())
    throw ArgumentError("corrupt", " has " + std::to_string(corrupt.size()) + " symbols and the clean text " +
                                       std::to_string(clean.size()) + ": patching needs texts of equal length");
  NoGradGuard no_grad;
  const int64_t V = model.config().vocab_size, T = static_cast<int64_t>(clean.size());
  // The unpatched runs without hooks: the same fused path as a patched stream, so patching
  // the whole stream entering the last block gives the clean logits bit for bit.
  const Tensor clean_logits = run(model, clean, nullptr), corrupt_logits = run(model, corrupt, nullptr);
  const float* clean_row = clean_logits.data() + (T - 1) * V;
  const float* corrupt_row = corrupt_logits.data() + (T - 1) * V;
  LogitPair pair;
  pair.answer = answer ? *answer : best_symbol(clean_row, V);
  if (against) pair.against = *against;
  else {
    pair.against = best_symbol(corrupt_row, V);
    if (pair.against == pair.answer) pair.against = best_symbol(clean_row, V, pair.answer);
  }
  if (pair.answer == pair.against) throw ArgumentError("against", " names the answer itself: give another symbol");
  const double clean_difference = difference(clean_logits, pair), corrupt_difference = difference(corrupt_logits, pair);
  if (clean_difference == corrupt_difference)
    throw ArgumentError("corrupt", " gives the clean text's logit difference (" + std::to_string(clean_difference) +
                                       "): nothing for patching to restore");
  Patching r = sweep(model, clean, corrupt, pair, clean_difference, corrupt_difference, true);
  for (int32_t id : clean) r.clean_tokens.push_back(vocab.symbol(id));
  for (int32_t id : corrupt) r.corrupt_tokens.push_back(vocab.symbol(id));
  r.answer_symbol = vocab.symbol(pair.answer);
  r.against_symbol = vocab.symbol(pair.against);
  return r;
}

const char* swap_name(Swap swap) { return swap == Swap::key ? "key" : "value"; }

namespace {

// An item whose "source" is inside its prompt and holds the answer.
bool has_source(const ProbeItem& item) {
  return item.source >= 0 && item.source < static_cast<int64_t>(item.prompt.size()) &&
         item.prompt[static_cast<size_t>(item.source)] == item.answer;
}

// Is ITEM's symbol K before its source the key at offset K: once in the prompt up to the
// source, and the question's symbol K before the prompt's end?
bool key_at(const ProbeItem& item, int64_t k) {
  const std::u32string& p = item.prompt;
  const int64_t n = static_cast<int64_t>(p.size()), at = item.source - k;
  if (at < 0 || n - k < 0) return false;
  const char32_t key = p[static_cast<size_t>(at)];
  return key == p[static_cast<size_t>(n - k)] && std::count(p.begin(), p.begin() + item.source, key) == 1;
}

}  // namespace

namespace {

constexpr int64_t kFarthestKey = 8;

// Does ITEM name its key (the probe's "key") with a symbol at offset K from its source
// (K > 0 before it, K < 0 after it)?
bool named_key_at(const ProbeItem& item, int64_t k) {
  return std::find(item.key.begin(), item.key.end(), item.source - k) != item.key.end();
}

// Swap::key's offsets of every kind in one pass over the probe set: those k at which all
// the kind's items with a source hold the key, nearest the source first (k before -k). A
// kind whose items all name their key ("key") holds it where they name it, on either side
// of the source; otherwise key_at finds it before the source. A kind without such items
// has none.
std::unordered_map<std::string, std::vector<int64_t>> all_key_offsets(const std::vector<ProbeItem>& probes) {
  struct Holds {
    bool named = true;
    bool at[2 * kFarthestKey + 1];  // [k + kFarthestKey]
  };
  std::unordered_map<std::string, Holds> holds;
  for (const ProbeItem& item : probes) {
    if (!has_source(item)) continue;
    auto [it, fresh] = holds.try_emplace(item.kind);
    Holds& h = it->second;
    h.named = h.named && !item.key.empty();
    for (int64_t k = -kFarthestKey; k <= kFarthestKey; ++k) {
      const bool here = k != 0 && (item.key.empty() ? k > 0 && key_at(item, k) : named_key_at(item, k));
      bool& at = h.at[k + kFarthestKey];
      at = (fresh || at) && here;
    }
  }
  std::unordered_map<std::string, std::vector<int64_t>> offsets;
  for (const auto& [kind, h] : holds) {
    std::vector<int64_t>& o = offsets[kind];
    for (int64_t distance = 1; distance <= kFarthestKey; ++distance)
      for (int64_t k : {distance, -distance})
        if ((k > 0 || h.named) && h.at[k + kFarthestKey]) o.push_back(k);
  }
  return offsets;
}

// Is every symbol at ITEM's source - offset inside [from, size)?
bool offsets_inside(const ProbeItem& item, const std::vector<int64_t>& offsets, int64_t from) {
  const int64_t size = static_cast<int64_t>(item.prompt.size());
  return std::all_of(offsets.begin(), offsets.end(), [&](int64_t k) {
    return item.source - k >= from && item.source - k < size;
  });
}

}  // namespace

std::vector<int64_t> key_offsets(const std::vector<ProbeItem>& probes, const std::string& kind) {
  auto all = all_key_offsets(probes);
  const auto it = all.find(kind);
  return it == all.end() ? std::vector<int64_t>{} : std::move(it->second);
}

CorruptionCandidates::CorruptionCandidates(const std::vector<ProbeItem>& probes, Swap swap) {
  std::unordered_map<std::string, std::vector<int64_t>> key_offsets;
  if (swap == Swap::key) key_offsets = all_key_offsets(probes);
  std::unordered_map<std::string, std::unordered_set<std::u32string>> seen;
  for (const ProbeItem& other : probes) {
    auto [it, fresh] = kinds_.try_emplace(other.kind);
    Kind& kind = it->second;
    if (fresh) {
      if (swap == Swap::value) kind.offsets = {0};
      else if (auto found = key_offsets.find(other.kind); found != key_offsets.end()) kind.offsets = found->second;
    }
    if (kind.offsets.empty() || (swap == Swap::key && (!has_source(other) || !offsets_inside(other, kind.offsets, 0))))
      continue;
    std::u32string symbols;  // the other item's symbols at the offsets: the replacements it offers
    for (int64_t k : kind.offsets) symbols += swap == Swap::key ? other.prompt[static_cast<size_t>(other.source - k)] : other.answer;
    if (seen[other.kind].insert(symbols).second) kind.candidates.push_back(std::move(symbols));
  }
}

std::optional<CorruptPrompt> CorruptionCandidates::corrupt(const ProbeItem& item, const Vocab& vocab,
                                                           int64_t block_size) const {
  const int64_t size = static_cast<int64_t>(item.prompt.size());
  const int64_t crop = std::max<int64_t>(0, size - block_size);
  if (!has_source(item) || item.source < crop) return std::nullopt;
  // The offsets before the source to change (the answer's own, or every key's) and, from
  // the kind's other items in file order, the symbols at the same offsets: the candidates.
  const auto kind = kinds_.find(item.kind);
  if (kind == kinds_.end()) return std::nullopt;
  const std::vector<int64_t>& offsets = kind->second.offsets;
  if (offsets.empty() || !offsets_inside(item, offsets, crop)) return std::nullopt;
  for (const std::u32string& candidate : kind->second.candidates) {
    std::u32string replacements;
    for (size_t i = 0; i < offsets.size(); ++i) {
      const char32_t r = candidate[i];
      if (r == item.prompt[static_cast<size_t>(item.source - offsets[i])] || !vocab.find(r) ||
          item.prompt.find(r) != std::u32string::npos || replacements.find(r) != std::u32string::npos)
        break;
      replacements += r;
    }
    if (replacements.size() != offsets.size()) continue;
    CorruptPrompt p;
    p.clean = item.prompt.substr(static_cast<size_t>(crop));
    p.corrupt = p.clean;
    for (size_t i = 0; i < offsets.size(); ++i) {
      p.positions.push_back(item.source - offsets[i] - crop);
      p.corrupt[static_cast<size_t>(p.positions.back())] = replacements[i];
    }
    p.replacements = std::move(replacements);
    return p;
  }
  return std::nullopt;
}

const std::vector<int64_t>& CorruptionCandidates::offsets(const std::string& kind) const {
  static const std::vector<int64_t> none;
  const auto it = kinds_.find(kind);
  return it == kinds_.end() ? none : it->second.offsets;
}

std::optional<CorruptPrompt> corrupt_prompt(const ProbeItem& item, const std::vector<ProbeItem>& probes,
                                            const Vocab& vocab, int64_t block_size, Swap swap) {
  return CorruptionCandidates(probes, swap).corrupt(item, vocab, block_size);
}

ProbePatching patch_probe(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes, Swap swap) {
  const ModelConfig& c = model.config();
  const int64_t V = c.vocab_size;
  ProbePatching out;
  out.swap = swap;
  out.n_layer = c.n_layer;
  out.n_head = c.n_head;
  NoGradGuard no_grad;
  const CorruptionCandidates candidates(probes, swap);
  std::unordered_map<std::string, size_t> kind_index;  // into out.kinds
  for (const ProbeItem& item : probes) {
    const std::optional<CorruptPrompt> prompt = candidates.corrupt(item, vocab, c.block_size);
    const std::optional<std::vector<int32_t>> clean = prompt ? vocab.find_all(prompt->clean) : std::nullopt;
    const std::optional<int32_t> answer = vocab.find(item.answer);
    if (!prompt || !clean || !answer) {
      ++out.skipped;
      continue;
    }
    const std::vector<int32_t> corrupt = *vocab.find_all(prompt->corrupt);
    const Tensor clean_logits = run(model, *clean, nullptr), corrupt_logits = run(model, corrupt, nullptr);
    // The competitor: the changed fact's value, or, when the key was changed, whatever the
    // corrupt run answers instead.
    LogitPair pair{*answer, 0};
    if (swap == Swap::value) pair.against = *vocab.find(prompt->replacements[0]);
    else {
      const int64_t T = static_cast<int64_t>(clean->size());
      pair.against = best_symbol(corrupt_logits.data() + (T - 1) * V, V);
      if (pair.against == pair.answer) pair.against = best_symbol(clean_logits.data() + (T - 1) * V, V, pair.answer);
    }
    const double clean_difference = difference(clean_logits, pair);
    const double corrupt_difference = difference(corrupt_logits, pair);
    if (clean_difference == corrupt_difference) {
      ++out.skipped;
      continue;
    }
    const Patching p = sweep(model, *clean, corrupt, pair, clean_difference, corrupt_difference, false);
    const auto [index, fresh] = kind_index.try_emplace(item.kind, out.kinds.size());
    if (fresh) {
      KindPatching k{item.kind, 0, std::vector<double>(p.heads.size(), 0.0), 0.0, {}};
      if (swap == Swap::key) k.key_offsets = candidates.offsets(item.kind);
      out.kinds.push_back(std::move(k));
    }
    KindPatching* kind = &out.kinds[index->second];
    ++kind->items;
    const double gap = clean_difference - corrupt_difference;
    kind->gap += gap;
    for (size_t i = 0; i < p.heads.size(); ++i) kind->heads[i] += p.heads[i] * gap;  // patched - corrupt
  }
  for (KindPatching& k : out.kinds)
    for (double& h : k.heads) h /= k.gap;
  return out;
}

}  // namespace mg
