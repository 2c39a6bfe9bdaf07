// The head explorer's data and page (report/explorer.h). The numbers come from the same
// functions the text outputs use (inspect_heads, score_head_roles, add_ablation_drops,
// trace_head, head_circuits), so the page and `inspect-heads --format json` agree.
#include "report/explorer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "data/json_limits.h"
#include "explorer_assets.h"  // generated from src/report/explorer/ at build time
#include "interp/ablation.h"
#include "interp/patterns.h"
#include "interp/qk_ov.h"
#include "interp/roles.h"
#include "interp/trace.h"
#include "interp/next_symbol.h"
#include "report/explorer_circuits.h"
#include "report/explorer_replay.h"
#include "report/run_curves.h"
#include "report/patterns_format.h"
#include "report/roles_format.h"
#include "report/trace_format.h"

namespace mg {
namespace {

using json = nlohmann::ordered_json;

// The vocabulary size up to which each head's two V x V circuit tables are embedded
// (2 * V^2 bytes per head: 12 KB at V = 79).
constexpr int64_t kMaxCircuitVocab = 256;

std::string base64(const std::vector<unsigned char>& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t n = (uint32_t{bytes[i]} << 16) | (i + 1 < bytes.size() ? uint32_t{bytes[i + 1]} << 8 : 0) |
                       (i + 2 < bytes.size() ? uint32_t{bytes[i + 2]} : 0);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

// float32, little-endian whatever the host.
std::string float32_base64(const std::vector<double>& values) {
  std::vector<unsigned char> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const float f = static_cast<float>(values[i]);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<unsigned char>(u >> (8 * b));
  }
  return base64(bytes);
}

}  // namespace

std::string weights_base64(const std::vector<float>& weights) {
  std::vector<unsigned char> bytes(weights.size() * 3);
  for (size_t i = 0; i < weights.size(); ++i) {
    const double w = std::clamp(static_cast<double>(weights[i]), 0.0, 1.0);
    const uint32_t q = static_cast<uint32_t>(std::lround(w * kWeightSteps));
    for (int b = 0; b < 3; ++b) bytes[3 * i + b] = static_cast<unsigned char>(q >> (8 * b));
  }
  return base64(bytes);
}

std::string lower_triangle_base64(const HeadInspection& h, int64_t T) {
  std::vector<float> lower;
  lower.reserve(static_cast<size_t>(T * (T + 1) / 2));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s <= t; ++s) lower.push_back(h.weight(t, s, T));
  return weights_base64(lower);
}

namespace {

// A table for drawing: each entry as a signed byte, round(127 x / max|x|); the page
// multiplies back by "max" (exact numbers are in the top pairs).
json int8_table(const std::vector<double>& table) {
  double max = 0.0;
  for (double x : table) max = std::max(max, std::abs(x));
  std::vector<unsigned char> bytes(table.size());
  for (size_t i = 0; i < table.size(); ++i)
    bytes[i] = static_cast<unsigned char>(static_cast<int8_t>(max > 0 ? std::lround(127.0 * table[i] / max) : 0));
  return {{"max", round9(max)}, {"int8", base64(bytes)}};
}

json optional_number(const std::optional<double>& v) { return v ? json(round9(*v)) : json(nullptr); }

json pairs_json(const std::vector<SymbolPair>& pairs) {
  json out = json::array();
  for (const SymbolPair& p : pairs) out.push_back({p.row, p.column, round9(p.value)});
  return out;
}

json circuits_json(const Gpt& model, const Vocab& vocab) {
  const ModelConfig& c = model.config();
  json out = {{"available", c.vocab_size <= kMaxCircuitVocab}};
  if (c.vocab_size > kMaxCircuitVocab) {
    out["reason"] = "the vocabulary has " + std::to_string(c.vocab_size) + " symbols, more than the " +
                    std::to_string(kMaxCircuitVocab) + " the page draws";
    // The same, for the page to word in its language (words.js notDrawnReason).
    out["reason_key"] = "vocab_too_large";
    out["vocab_size"] = c.vocab_size;
    out["max_vocab_size"] = kMaxCircuitVocab;
    return out;
  }
  json heads = json::array();
  for (int64_t l = 0; l < c.n_layer; ++l)
    for (int64_t h = 0; h < c.n_head; ++h) {
      const HeadCircuits circuits = head_circuits(model, vocab, l, h);
      heads.push_back({{"layer", l},
                       {"head", h},
                       {"copy_score", round9(circuits.copy_score)},
                       {"diagonal_top1", round9(circuits.diagonal_top1)},
                       {"qk_top", pairs_json(top_pairs(circuits.qk, circuits.V, 10))},
                       {"ov_top", pairs_json(top_pairs(circuits.ov, circuits.V, 10))},
                       {"qk", int8_table(circuits.qk)},
                       {"ov", int8_table(circuits.ov)}});
    }
  out["V"] = c.vocab_size;
  json symbols = json::array();
  for (const auto& symbol : vocab.symbols()) symbols.push_back(symbol_label(symbol));
  out["symbols"] = std::move(symbols);
  out["heads"] = std::move(heads);
  return out;
}

// Each head's keys and values once, as float32 (from its trace at the last position: they
// do not depend on the query), and the rest of its trace at every traced position. One
// forward pass serves them all.
json traces_json(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                 const std::vector<int64_t>& positions) {
  const ModelConfig& c = model.config();
  const int64_t T = static_cast<int64_t>(text.size());
  const TraceForward forward = trace_forward(model, vocab, text, what);
  json heads = json::array();
  for (int64_t l = 0; l < c.n_layer; ++l)
    for (int64_t h = 0; h < c.n_head; ++h) {
      json one = {{"layer", l}, {"head", h}};
      json at = json::object();
      for (int64_t p : positions) {
        const HeadTrace trace = trace_head(model, vocab, forward, l, h, p, 8);
        if (p == T - 1) {
          std::vector<double> keys, values;  // [T,d] each
          for (const auto& k : trace.keys) keys.insert(keys.end(), k.begin(), k.end());
          for (const auto& v : trace.values) values.insert(values.end(), v.begin(), v.end());
          one["keys"] = float32_base64(keys);
          one["values"] = float32_base64(values);
        }
        at[std::to_string(p)] = trace_json(trace, false);
      }
      one["at"] = std::move(at);
      heads.push_back(std::move(one));
    }
  return {{"positions", positions},
          {"all_positions", static_cast<int64_t>(positions.size()) == T},
          {"budget", kAllPositionsBudget},
          {"vectors_encoding", "keys and values: [T,d] float32 little-endian, base64"},
          {"heads", std::move(heads)}};
}

json roles_json(const Gpt& model, const Vocab& vocab, const std::vector<int32_t>& ids, const ExplorerOptions& o) {
  RoleOptions options;
  if (o.probes) {
    options.probes = o.probes;
    options.texts = probe_texts(vocab, *o.probes, model.config().block_size);
    options.texts_description = probe_prompts_description(options.texts.size(), o.probe_name);
    options.texts_source = "probe";
    options.texts_probe = o.probe_name;
  }
  if (options.texts.empty()) {
    options.texts = {ids};
    options.texts_description = page_text_description();
    options.texts_source = "text";
  }
  RoleReport report = score_head_roles(model, vocab, options);
  if (o.probes && !options.probes->empty()) add_ablation_drops(model, vocab, *o.probes, o.mean_ablation, report);
  json out = role_report_json(report);
  out["probe"] = o.probes ? json(o.probe_name) : json(nullptr);
  return out;
}

}  // namespace

std::vector<int64_t> traced_positions(int64_t n_layer, int64_t n_head, int64_t T, std::optional<int64_t> position) {
  std::vector<int64_t> out;
  if (n_layer * n_head * T <= kAllPositionsBudget) {
    for (int64_t p = 0; p < T; ++p) out.push_back(p);
    return out;
  }
  if (position && *position != T - 1) out.push_back(*position);
  out.push_back(T - 1);
  return out;
}

json explorer_data(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                   const ExplorerOptions& o) {
  const ModelConfig& c = model.config();
  Inspection inspection = inspect_heads(model, vocab, text, what, {});
  const int64_t T = inspection.T;
  if (o.position) check_index("position", *o.position, T, "the text has " + std::to_string(T) + " symbols");
  json out = json::object();
  out["format"] = "mini-gpt head explorer 1";
  out["source"] = o.source;
  out["model"] = {{"n_layer", c.n_layer}, {"n_head", c.n_head}, {"n_embd", c.n_embd}, {"head_width", c.head_width()},
                  {"block_size", c.block_size}, {"vocab_size", c.vocab_size},
                  {"position", position_name(c.position)}};  // "rope" or "learned", as config.json names it
  std::string text_utf8;
  for (const auto& token : inspection.tokens) text_utf8 += token;
  out["text"] = text_utf8;
  out["tokens"] = inspection.tokens;
  json labels = json::array();
  for (const auto& token : inspection.tokens) labels.push_back(symbol_label(token));
  out["labels"] = std::move(labels);
  out["loss"] = optional_number(inspection.loss);

  json heads = json::array();
  for (const HeadInspection& h : inspection.heads)
    heads.push_back({{"layer", h.layer},
                     {"head", h.head},
                     {"weights", lower_triangle_base64(h, T)},
                     {"summary", head_summary_json(h.summary)}});
  out["weights_encoding"] = "uint24 little-endian, weight = value / " + std::to_string(kWeightSteps) +
                            ", base64; row t holds keys 0..t (lower triangle)";
  out["weight_steps"] = kWeightSteps;
  out["heads"] = std::move(heads);
  out["roles"] = roles_json(model, vocab, inspection.ids, o);
  out["traces"] = traces_json(model, vocab, text, what, traced_positions(c.n_layer, c.n_head, T, o.position));
  out["circuits"] = circuits_json(model, vocab);
  out["circuit"] = circuit_explorer_json(model, vocab, inspection.ids, o.probes,
                                         traced_positions(c.n_layer, c.n_head, T, o.position));
  // The next symbol at each traced position, as --next-symbol gives it (sampling as drawn).
  std::vector<NextSymbols> next;
  const std::vector<int64_t> positions = traced_positions(c.n_layer, c.n_head, T, o.position);
  for (int64_t p : positions) next.push_back(next_symbols(model, vocab, text, {p, {}, {}, std::nullopt, std::nullopt}));
  out["next"] = {{"positions", positions}, {"at", next_symbols_compact(next)}};
  out["run"] = o.run_dir ? run_curves(*o.run_dir) : json(nullptr);
  out["replay"] = o.replay && o.run_dir ? explorer_replay_json(*o.replay, o.run_dir->string()) : json(nullptr);
  return out;
}

std::string explorer_html(const json& data) {
  // In <script type="application/json"> only "</script" could end the element early; a
  // '<' appears only inside JSON strings, where \u003c means the same.
  // Invalid UTF-8 (a run folder's name) is replaced, never thrown.
  std::string payload = data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string escaped;
  escaped.reserve(payload.size());
  for (char ch : payload) {
    if (ch == '<') escaped += "\\u003c";
    else escaped += ch;
  }
  auto fill = [](std::string page, const std::string& marker, const std::string& with) {
    const size_t at = page.find(marker);
    MG_CHECK(at != std::string::npos, "explorer.html lacks the marker " + marker);
    return page.replace(at, marker.size(), with);
  };
  std::string page = explorer_assets::kHtml;
  page = fill(std::move(page), "/*@PAGE_CSS@*/", explorer_assets::kPageCss);
  page = fill(std::move(page), "/*@EXPLORER_CSS@*/", explorer_assets::kCss);
  page = fill(std::move(page), "/*@PAGE_JS@*/", std::string(shared_page_js()));
  page = fill(std::move(page), "/*@EXPLORER_JS@*/", explorer_assets::kJs);
  page = fill(std::move(page), "<!--@REPLAY_TRACK@-->", explorer_assets::kReplayHtml);
  return fill(std::move(page), "@EXPLORER_DATA@", escaped);
}

std::string_view shared_page_js() {
  // The words of both pages (page/words.js, one table per language), then the drawing.
  static const std::string js = std::string(explorer_assets::kWordsJs) + "\n" + explorer_assets::kPageJs;
  return js;
}
std::string_view shared_page_css() { return explorer_assets::kPageCss; }
std::string_view shared_replay_html() { return explorer_assets::kReplayHtml; }

std::string explorer_written_line(const std::string& path, size_t page_bytes, const json& data,
                                  const std::string& probe_name) {
  std::string positions;
  for (const auto& p : data["traces"]["positions"]) positions += (positions.empty() ? "" : ",") + p.dump();
  return format("head explorer written to %s (%.1f MB): %lld layers x %lld heads, %lld symbols, traces at %s, %s\n",
                path.c_str(), static_cast<double>(page_bytes) / 1e6, data["model"]["n_layer"].get<long long>(),
                data["model"]["n_head"].get<long long>(), static_cast<long long>(data["tokens"].size()),
                data["traces"]["all_positions"].get<bool>() ? "every position" : ("positions " + positions).c_str(),
                probe_name.empty() ? "no probe" : ("probe " + probe_name).c_str());
}

}  // namespace mg
