// The --circuits printout (report/qk_ov_format.h).
#include "report/qk_ov_format.h"

#include "report/text.h"

namespace mg {

std::string format_circuits(const HeadCircuits& c, int64_t top) {
  auto label = [&](int32_t id) { return "\"" + symbol_label(c.symbols[id]) + "\""; };
  std::string out = format("circuits of %s in the symbol basis (%lld x %lld)\n", head_name(c.layer, c.head).c_str(),
                           static_cast<long long>(c.V), static_cast<long long>(c.V));
  out += "direct path: each symbol's embedding through this block's ln1; ";
  out += c.layer == 0 ? "exact for layer 0's stream" : "the earlier blocks' additions are left out";
  out += "; QK at relative offset 0 (RoPE) or without pos_emb (learned); OV through ln_f as centring times "
         "ln_f.weight (the final sigma left out), later blocks left out\n\n";
  out += format("QK: query symbol -> key symbol it prefers (score before softmax), top %lld\n",
                static_cast<long long>(top));
  for (const SymbolPair& p : top_pairs(c.qk, c.V, top))
    out += format("  %s -> %s  %+.4f\n", label(p.row).c_str(), label(p.column).c_str(), p.value);
  out += format("\nOV: attended symbol -> output symbol whose logit it raises, top %lld\n", static_cast<long long>(top));
  for (const SymbolPair& p : top_pairs(c.ov, c.V, top))
    out += format("  %s -> %s  %+.4f%s\n", label(p.row).c_str(), label(p.column).c_str(), p.value,
                  p.row == p.column ? "  (copy)" : "");
  out += format("\nOV copy score %+.3f (sum of eigenvalues / sum of their moduli: 1 = copying, 0 = none, -1 = "
                "suppressing); its own symbol is the top output for %.0f%% of attended symbols (diagonal)\n",
                c.copy_score, 100.0 * c.diagonal_top1);
  return out;
}

}  // namespace mg
