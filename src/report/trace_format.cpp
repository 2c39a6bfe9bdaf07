// The worked trace's printout and JSON (report/trace_format.h).
#include "report/trace_format.h"

#include <algorithm>
#include <cmath>

#include "report/text.h"

namespace mg {
namespace {

// "[a, b, c, ...]" at 6 decimals, 8 numbers a line, continuation lines indented.
std::string vector6(const std::vector<double>& v, const std::string& indent) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += i % 8 == 0 ? ",\n" + indent + " " : ", ";
    out += format("%.6f", v[i]);
  }
  return out + "]";
}

nlohmann::ordered_json numbers(const std::vector<double>& v) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (double x : v) out.push_back(round9(x));
  return out;
}

// Features [first, first + n) of V: one head's slice of a [D] row.
std::vector<double> slice(const std::vector<double>& v, int64_t first, int64_t n) {
  return {v.begin() + first, v.begin() + first + n};
}

// The whole layer at the query position: split into heads, each head, concatenated, W_O, the residual.
std::string format_split_merge(const HeadTrace& r) {
  const SplitMergeTrace& m = r.split_merge;
  const int64_t D = r.D, d = m.d, H = m.H, P = r.position;
  const long long L = static_cast<long long>(r.layer);
  std::string out = format("\nsplit and merge: all %lld heads of layer %lld at t = %lld, [B,T,D] -> [B,H,T,d] -> [B,T,D] "
                           "(D = %lld, H = %lld, d = %lld)\n",
                           static_cast<long long>(H), L, static_cast<long long>(P), static_cast<long long>(D),
                           static_cast<long long>(H), static_cast<long long>(d));
  out += format("S1. x_t [%lld] (step 1) projected whole: q_t = x_t Wq^T, k_t = x_t Wk^T, v_t = x_t Wv^T, each [%lld]; "
                "split_heads gives head h features h*d .. h*d+d-1 of each row\n",
                static_cast<long long>(D), static_cast<long long>(D));
  const std::pair<const char*, const std::vector<double>*> rows[] = {{"q_t", &m.q_row}, {"k_t", &m.k_row}, {"v_t", &m.v_row}};
  // A label, then a vector whose continuation lines line up under its first number.
  auto labelled = [](const std::string& label, const std::vector<double>& v) {
    return label + vector6(v, std::string(label.size(), ' ')) + "\n";
  };
  for (const auto& [name, row] : rows)
    for (int64_t h = 0; h < H; ++h)
      out += labelled(format("   %s head %lld [%lld..%lld] ", name, static_cast<long long>(h), static_cast<long long>(h * d),
                             static_cast<long long>(h * d + d - 1)),
                      slice(*row, h * d, d));
  out += "   (q and k before RoPE; each head rotates its own q and k, as steps 2 and 3 show for this head)\n";
  out += format("S2. each head reads with its own row of projected_weights and writes its own output [d = %lld]\n",
                static_cast<long long>(d));
  for (int64_t h = 0; h < H; ++h) {
    out += labelled(format("   head %lld weights ", static_cast<long long>(h)), m.head_weights[h]);
    out += labelled(format("   head %lld output%s ", static_cast<long long>(h), h == r.head ? " (step 8)" : "         "),
                    m.head_outputs[h]);
  }
  out += format("S3. merge_heads: the outputs concatenated, not added, into [D = %lld]: head h's %lld numbers at "
                "features h*d .. h*d+d-1\n   ",
                static_cast<long long>(D), static_cast<long long>(d));
  out += vector6(m.concatenated, "   ") + "\n";
  if (H > 1)
    out += format("   feature 0 is head 0's %.6f and feature %lld head 1's %.6f; added, they would have made one [%lld] "
                  "vector starting %.6f\n",
                  m.head_outputs[0][0], static_cast<long long>(d), m.head_outputs[1][0], static_cast<long long>(d),
                  m.head_outputs[0][0] + m.head_outputs[1][0]);
  out += format("S4. W_O: attention output = concatenated Wo^T [D = %lld], each feature a mix of every head "
                "(blocks.%lld.attn.out_proj; step 9 is this head's columns alone)\n   ",
                static_cast<long long>(D), L);
  out += vector6(m.attention_out, "   ") + "\n";
  out += format("S5. the residual stream at t: entering block %lld\n   ", L) + vector6(m.residual_in, "   ") + "\n";
  out += "   plus the attention output (the block's MLP comes after)\n   " + vector6(m.residual_out, "   ") + "\n";
  double largest = 0.0;
  for (int64_t i = 0; i < D; ++i)
    largest = std::max(largest, std::fabs(m.residual_out[i] - static_cast<double>(m.forward_residual_out[i])));
  out += format("   the forward's blocks.%lld.hook_resid_mid at t differs from it by at most %.3g\n", L, largest);
  return out;
}

}  // namespace

std::string format_trace(const HeadTrace& r) {
  const int64_t P = r.position;
  std::string text;
  for (const auto& t : r.tokens) text += symbol_label(t);
  auto sym = [&](int64_t s) { return "\"" + symbol_label(r.tokens[s]) + "\""; };
  std::string out = "text: " + text + " (" + std::to_string(r.T) + " symbols; positions: " + position_name(r.position_type) + ")\n";
  out += format("trace of %s (layer %lld, head %lld) at query position %lld %s: D = %lld, d = %lld, head h reads rows "
                "%lld..%lld of Wq, Wk, Wv and columns %lld..%lld of Wo\n",
                head_name(r.layer, r.head).c_str(), static_cast<long long>(r.layer), static_cast<long long>(r.head),
                static_cast<long long>(P),
                sym(P).c_str(), static_cast<long long>(r.D), static_cast<long long>(r.d),
                static_cast<long long>(r.head * r.d), static_cast<long long>(r.head * r.d + r.d - 1),
                static_cast<long long>(r.head * r.d), static_cast<long long>(r.head * r.d + r.d - 1));
  out += "head output = softmax(q k^T / sqrt(d) + causal mask) @ v, then @ Wo^T onto the residual stream\n\n";
  out += format("1. x_t = LayerNorm(residual stream at t = %lld; blocks.%lld.ln1)  [D = %lld]\n   ",
                static_cast<long long>(P), static_cast<long long>(r.layer), static_cast<long long>(r.D));
  out += vector6(r.x, "   ") + "\n";
  out += format("2. q_t = x_t Wq_h^T  [d = %lld]\n   ", static_cast<long long>(r.d)) + vector6(r.q_raw, "   ") + "\n";
  if (r.position_type == PositionType::rope)
    out += format("   after RoPE at position %lld (pairs (2i, 2i+1) rotated by %lld * %g^(-2i/d)):\n   ",
                  static_cast<long long>(P), static_cast<long long>(P), r.rope_base) +
           vector6(r.q, "   ") + "\n";
  else
    out += "   (learned positions: no rotation; q_t as above)\n";
  out += std::string("3. k_s = x_s Wk_h^T") + (r.position_type == PositionType::rope ? ", after RoPE at s" : "") +
         format(", for each key s = 0..%lld\n", static_cast<long long>(P));
  for (int64_t s = 0; s <= P; ++s)
    out += format("   k_%-3lld %s ", static_cast<long long>(s), sym(s).c_str()) + vector6(r.keys[s], "          ") + "\n";
  out += format("4. q . k_s, 5. divided by sqrt(d) (times %.9f), 6. causal mask, 7. softmax = projected_weights row %lld\n",
                r.scale, static_cast<long long>(P));
  out += "      s  key     q.k_s     /sqrt(d)   mask    weight     (forward pass)\n";
  for (int64_t s = 0; s < r.T; ++s) {
    out += format("   %4lld  %-5s", static_cast<long long>(s), sym(s).c_str());
    if (s <= P)
      out += format(" %10.6f %10.6f    0    %.6f   (%.6f)\n", r.dots[s], r.scores[s], r.weights[s],
                    static_cast<double>(r.forward_weights[s]));
    else
      out += format(" %10s %10s  -inf   %.6f   (%.6f)\n", "", "", r.weights[s], static_cast<double>(r.forward_weights[s]));
  }
  out += "8. head output = sum_s weight_s v_s, the values v_s = x_s Wv_h^T being\n";
  for (int64_t s = 0; s <= P; ++s)
    out += format("   v_%-3lld %s ", static_cast<long long>(s), sym(s).c_str()) + vector6(r.values[s], "          ") +
           "\n";
  out += "   head output  " + vector6(r.head_output, "               ") + "\n";
  out += "9. the head's slice of Wo applied: Wo[:, h*d..h*d+d-1] head output  [D]\n   ";
  out += vector6(r.contribution, "   ") + "\n";
  out += format("10. this is the head's contribution to the residual stream at t = %lld (added with the other heads' "
                "and the block's input)\n",
                static_cast<long long>(P));
  out += format("11. output symbols it pushes up (direct logit attribution, an approximation: the contribution "
                "centred, divided by the final residual's sigma %.6f at t, times ln_f.weight, then the vocabulary "
                "head; later blocks ignored)\n",
                r.final_sigma);
  out += "    up:  ";
  for (const LogitPush& p : r.top_up) out += format(" \"%s\" %+.6f", symbol_label(p.symbol).c_str(), p.logit);
  out += "\n    down:";
  for (const LogitPush& p : r.top_down) out += format(" \"%s\" %+.6f", symbol_label(p.symbol).c_str(), p.logit);
  out += "\n";
  if (r.split_merge.H > 0) out += format_split_merge(r);
  return out;
}

nlohmann::ordered_json trace_json(const HeadTrace& r, bool keys_and_values) {
  using json = nlohmann::ordered_json;
  json out = {{"layer", r.layer}, {"head", r.head}, {"position", r.position}, {"T", r.T},
              {"D", r.D}, {"d", r.d}, {"position_type", position_name(r.position_type)}, {"rope_base", r.rope_base},
              {"x", numbers(r.x)}, {"q_raw", numbers(r.q_raw)}, {"q", numbers(r.q)}};
  if (keys_and_values) out["tokens"] = r.tokens;
  if (keys_and_values) {
    out["keys"] = json::array();
    for (const auto& k : r.keys) out["keys"].push_back(numbers(k));
    out["values"] = json::array();
    for (const auto& v : r.values) out["values"].push_back(numbers(v));
  }
  out["dots"] = numbers(r.dots);
  out["scale"] = r.scale;
  out["scores"] = numbers(r.scores);
  if (keys_and_values) {
    out["weights"] = numbers(r.weights);
    out["forward_weights"] = json::array();
    for (float w : r.forward_weights) out["forward_weights"].push_back(round9(w));
  } else {  // the keys after P have weight 0; the forward's row is the page's weights table
    out["weights"] = numbers(std::vector<double>(r.weights.begin(), r.weights.begin() + r.position + 1));
  }
  out["head_output"] = numbers(r.head_output);
  out["contribution"] = numbers(r.contribution);
  out["final_sigma"] = round9(r.final_sigma);
  if (keys_and_values) out["logit_push"] = numbers(r.logit_push);
  auto pushes = [](const std::vector<LogitPush>& list) {
    json a = json::array();
    for (const LogitPush& p : list) a.push_back({{"id", p.id}, {"symbol", p.symbol}, {"logit", round9(p.logit)}});
    return a;
  };
  out["top_up"] = pushes(r.top_up);
  out["top_down"] = pushes(r.top_down);
  if (keys_and_values && r.split_merge.H > 0) {
    const SplitMergeTrace& m = r.split_merge;
    json heads = json::array();
    for (int64_t h = 0; h < m.H; ++h) heads.push_back({{"weights", numbers(m.head_weights[h])}, {"output", numbers(m.head_outputs[h])}});
    json forward_out = json::array();
    for (float v : m.forward_residual_out) forward_out.push_back(round9(v));
    out["split_merge"] = {{"H", m.H}, {"d", m.d}, {"q_row", numbers(m.q_row)}, {"k_row", numbers(m.k_row)},
                          {"v_row", numbers(m.v_row)}, {"heads", heads}, {"concatenated", numbers(m.concatenated)},
                          {"attention_out", numbers(m.attention_out)}, {"residual_in", numbers(m.residual_in)},
                          {"residual_out", numbers(m.residual_out)}, {"forward_residual_out", forward_out}};
  }
  return out;
}

}  // namespace mg
