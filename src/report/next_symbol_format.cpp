// inspect-heads --next-symbol's table and JSON (report/next_symbol_format.h).
#include "report/next_symbol_format.h"

#include "report/text.h"

namespace mg {

std::string format_next_symbols(const NextSymbols& n) {
  std::string text;
  for (const std::string& t : n.tokens) text += t;
  std::string ablated;
  for (const std::string& h : n.ablate) ablated += (ablated.empty() ? "" : ", ") + h;
  std::string out = format("next symbol after position %lld of \"%s\" (temperature %g, top_k %lld, top_p %g%s%s)\n",
                           static_cast<long long>(n.position), text.c_str(), n.sampling.temperature,
                           static_cast<long long>(n.sampling.top_k), n.sampling.top_p,
                           ablated.empty() ? "" : "; ablated ", ablated.c_str());
  out += "  rank  symbol  probability      logit\n";
  for (size_t k = 0; k < n.top.size(); ++k) {
    const NextSymbolEntry& e = n.top[k];
    std::string label = symbol_label(e.symbol);
    label += std::string(static_cast<size_t>(std::max(0, 6 - display_width(label))), ' ');
    out += format("  %4zu  %s  %11.6f  %9.4f\n", k + 1, label.c_str(), e.probability, e.logit);
  }
  out += format("answer %s (logit %.4f) against %s (logit %.4f): difference %.4f\n", symbol_label(n.answer.symbol).c_str(),
                n.answer.logit, symbol_label(n.against.symbol).c_str(), n.against.logit, n.answer.logit - n.against.logit);
  return out;
}

nlohmann::ordered_json next_symbols_json(const NextSymbols& n) {
  using json = nlohmann::ordered_json;
  json top = json::array();
  for (const NextSymbolEntry& e : n.top)
    top.push_back({{"id", e.id}, {"symbol", e.symbol}, {"probability", round9(e.probability)}, {"logit", round9(e.logit)}});
  json out = {{"tokens", n.tokens},
              {"position", n.position},
              {"temperature", n.sampling.temperature},
              {"top_k", n.sampling.top_k}};
  if (n.sampling.top_p < 1.0) out["top_p"] = n.sampling.top_p;
  out["ablate"] = n.ablate;
  out["top"] = std::move(top);
  out["answer"] = {{"id", n.answer.id}, {"symbol", n.answer.symbol}, {"logit", round9(n.answer.logit)}};
  out["against"] = {{"id", n.against.id}, {"symbol", n.against.symbol}, {"logit", round9(n.against.logit)}};
  out["difference"] = round9(n.answer.logit - n.against.logit);
  return out;
}

}  // namespace mg
