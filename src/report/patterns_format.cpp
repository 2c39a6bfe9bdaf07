// Text renderings of an Inspection: tables padded by display width, the lesson-style
// query row, the parameter slices, and the JSON of docs/cli.md, "inspect-heads".
#include "report/patterns_format.h"

#include <algorithm>
#include <cmath>

#include "data/utf8.h"
#include "core/error.h"
#include "report/text.h"

namespace mg {
namespace {

// TEXT right-aligned (pad on the left) or left-aligned in WIDTH display columns.
std::string pad_left(const std::string& text, int width) {
  return std::string(static_cast<size_t>(std::max(0, width - display_width(text))), ' ') + text;
}
std::string pad_right(const std::string& text, int width) {
  return text + std::string(static_cast<size_t>(std::max(0, width - display_width(text))), ' ');
}

int digits(int64_t n) { return static_cast<int>(std::to_string(n).size()); }

// "0.002978", or "0" for an exact 0 (a masked key), as the lesson prints it.
std::string weight6(float w) { return w == 0.0f ? std::string("0") : format("%.6f", static_cast<double>(w)); }

// Column geometry shared by a text's tables: labels padded to the widest symbol.
struct Layout {
  int index_width = 1, label_width = 1, cell_width = 6;
  explicit Layout(const Inspection& r) {
    index_width = digits(std::max<int64_t>(r.T - 1, 0));
    for (const auto& token : r.tokens) label_width = std::max(label_width, display_width(symbol_label(token)));
    cell_width = std::max(6, label_width + 1);
  }
  std::string row_prefix(const Inspection& r, int64_t t) const {
    return "  " + pad_left(std::to_string(t), index_width) + " " + pad_right(symbol_label(r.tokens[t]), label_width);
  }
  int prefix_width() const { return 2 + index_width + 1 + label_width; }
};

std::string text_header(const Inspection& r) {
  std::string shown;
  for (const auto& token : r.tokens) shown += symbol_label(token);
  std::string out = "text: " + shown + " (" + std::to_string(r.T) + (r.T == 1 ? " symbol" : " symbols") +
                    "; model: " + std::to_string(r.n_layer) + (r.n_layer == 1 ? " layer" : " layers") + " x " +
                    std::to_string(r.n_head) + (r.n_head == 1 ? " head" : " heads") + ")\n";
  if (r.loss)
    out += format("loss on the text: %.4f nats/symbol over %lld next-symbol prediction%s\n", *r.loss,
                  static_cast<long long>(r.T - 1), r.T == 2 ? "" : "s");
  else if (r.T == 1)
    out += "loss on the text: none (a one-symbol text predicts nothing, so no importance either)\n";
  return out;
}

std::string summary_block(const HeadSummary& s, int64_t T) {
  std::string out;
  out += format("  mean row entropy  %.3f nats (a uniform last row would be %.3f)\n", s.mean_entropy,
                std::log(static_cast<double>(T)));
  out += "  reads most        " + describe_offset(s.top_offset) +
         format(", %.1f%% of the head's weight\n", 100.0 * s.top_offset_share);
  if (s.first_share)
    out += format("  on position 0     %.3f (mean of w[t][0] over query rows t >= 1)\n", *s.first_share);
  if (s.importance)
    out += format("  importance        %+.4f nats/symbol (loss %.4f with this head's output zeroed)\n", *s.importance,
                  *s.ablated_loss);
  return out;
}

std::string parameters_for(const std::vector<HeadParameters>* parameters, size_t i) {
  if (!parameters) return "";
  MG_CHECK(i < parameters->size(), "format: fewer parameter sets than heads");
  return format_parameters((*parameters)[i]);
}

}  // namespace

std::string describe_offset(int64_t offset) {
  if (offset == 0) return "offset 0 (itself)";
  if (offset == -1) return "offset -1 (the previous symbol)";
  return "offset " + std::to_string(offset) + " (" + std::to_string(-offset) + " symbols back)";
}

std::string summary_line(const HeadSummary& s) {
  std::string out = format("entropy %.2f nats · reads offset %lld most (%.0f%%)", s.mean_entropy,
                           static_cast<long long>(s.top_offset), 100.0 * s.top_offset_share);
  if (s.first_share) out += format(" · on position 0: %.2f", *s.first_share);
  if (s.importance) out += format(" · importance %+.3f", *s.importance);
  return out;
}

nlohmann::ordered_json inspection_json(const Inspection& r, std::optional<int64_t> position,
                               const std::vector<HeadParameters>* parameters, const RoleReport* roles) {
  using json = nlohmann::ordered_json;  // keys in docs/cli.md's order: text, tokens, layers
  json out = json::object();
  out["text"] = encode_utf8(r.text);
  out["tokens"] = r.tokens;
  if (position) out["query_position"] = *position;
  if (roles) out["roles_texts"] = roles->texts;
  auto optional_number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json layers = json::array();
  for (size_t i = 0; i < r.heads.size(); ++i) {
    const HeadInspection& h = r.heads[i];
    if (layers.empty() || layers.back()["layer"] != h.layer) layers.push_back({{"layer", h.layer}, {"heads", json::array()}});
    json rows = json::array();
    for (int64_t t = 0; t < r.T; ++t) {
      json row = json::array();
      for (int64_t s = 0; s < r.T; ++s) row.push_back(round9(h.weight(t, s, r.T)));
      rows.push_back(std::move(row));
    }
    json head = {{"head", h.head}, {"projected_weights", rows}};
    if (position) head["position_weights"] = rows[static_cast<size_t>(*position)];
    head["summary"] = {{"mean_entropy", h.summary.mean_entropy},
                       {"top_offset", h.summary.top_offset},
                       {"top_offset_share", h.summary.top_offset_share},
                       {"first_share", optional_number(h.summary.first_share)},
                       {"importance", optional_number(h.summary.importance)},
                       {"ablated_loss", optional_number(h.summary.ablated_loss)}};
    if (roles)
      for (const HeadRoleScores& scores : roles->heads)
        if (scores.layer == h.layer && scores.head == h.head) head["roles"] = head_roles_json(scores);
    if (parameters) {
      MG_CHECK(i < parameters->size(), "inspection_json: fewer parameter sets than heads");
      json slices = json::object();
      for (const ParameterSlice& s : (*parameters)[i].slices) {
        const int64_t R = s.values.dim(0), C = s.values.dim(1);
        json values = json::array();
        for (int64_t a = 0; a < R; ++a) {
          json row = json::array();
          for (int64_t b = 0; b < C; ++b) row.push_back(round9(s.values[a * C + b]));
          values.push_back(std::move(row));
        }
        slices[s.name] = {{"tensor", s.tensor},
                          {s.columns ? "columns" : "rows", {s.first, s.last}},
                          {"shape", {R, C}},
                          {"frobenius_norm", s.norm},
                          {"tensor_frobenius_norm", s.tensor_norm},
                          {"values", std::move(values)}};
      }
      head["parameters"] = std::move(slices);
    }
    layers.back()["heads"].push_back(std::move(head));
  }
  out["layers"] = std::move(layers);
  return out;
}

std::string format_table(const Inspection& r, const std::vector<HeadParameters>* parameters) {
  const Layout layout(r);
  std::string out = text_header(r);
  for (size_t i = 0; i < r.heads.size(); ++i) {
    const HeadInspection& h = r.heads[i];
    out += format("\n%s (layer %lld, head %lld): projected_weights (row t: query, column s: key; \"-\": masked, s > t)\n",
                  head_name(h.layer, h.head).c_str(), static_cast<long long>(h.layer), static_cast<long long>(h.head));
    // Two header lines, key positions then key symbols, each over its column.
    std::string indices(static_cast<size_t>(layout.prefix_width()), ' '), symbols = indices;
    for (int64_t s = 0; s < r.T; ++s) {
      indices += pad_left(std::to_string(s), layout.cell_width);
      symbols += pad_left(symbol_label(r.tokens[s]), layout.cell_width);
    }
    out += indices + "\n" + symbols + "\n";
    for (int64_t t = 0; t < r.T; ++t) {
      out += layout.row_prefix(r, t);
      for (int64_t s = 0; s < r.T; ++s)
        out += pad_left(s > t ? std::string("-") : format("%.3f", static_cast<double>(h.weight(t, s, r.T))),
                        layout.cell_width);
      out += "\n";
    }
    out += summary_block(h.summary, r.T);
    out += parameters_for(parameters, i);
  }
  return out;
}

std::string format_position(const Inspection& r, int64_t position, const std::vector<HeadParameters>* parameters) {
  MG_CHECK(position >= 0 && position < r.T, "format_position: position out of range");
  const Layout layout(r);
  std::string out = text_header(r);
  out += "query position " + std::to_string(position) + " \"" + symbol_label(r.tokens[position]) +
         "\": reads keys 0.." + std::to_string(position) +
         (position + 1 < r.T ? "; later keys are masked to 0\n" : "\n");
  constexpr int kPairsPerLine = 6;
  for (size_t i = 0; i < r.heads.size(); ++i) {
    const HeadInspection& h = r.heads[i];
    if (i == 0 || r.heads[i - 1].layer != h.layer) out += "\nlayer " + std::to_string(h.layer) + "\n";
    out += "  head " + std::to_string(h.head) + " \u2248 [";
    for (int64_t s = 0; s < r.T; ++s) out += (s ? ", " : "") + weight6(h.weight(position, s, r.T));
    out += "]\n";
    // Each visible key with its weight, in aligned columns.
    for (int64_t s = 0; s <= position; ++s) {
      if (s % kPairsPerLine == 0) out += "   ";
      out += "  " + pad_left(std::to_string(s), layout.index_width) + " " +
             pad_right(symbol_label(r.tokens[s]), layout.label_width) + " " +
             pad_left(weight6(h.weight(position, s, r.T)), 8);
      if (s % kPairsPerLine == kPairsPerLine - 1 || s == position) out += "\n";
    }
    out += "    " + summary_line(h.summary) + "\n";
    out += parameters_for(parameters, i);
  }
  return out;
}

std::string format_parameters(const HeadParameters& p) {
  MG_CHECK(p.slices.size() == 4 && !p.slices[0].columns, "format_parameters: expected Wq, Wk, Wv, Wo");
  const int64_t d = p.slices[0].values.dim(0), D = p.slices[0].values.dim(1);
  std::string out = format("  parameters of %s: 4 x d x D = 4 x %lld x %lld = %lld of the block's "
                           "4*D^2 = %lld\n",
                           head_name(p.layer, p.head).c_str(), static_cast<long long>(d),
                           static_cast<long long>(D), static_cast<long long>(4 * d * D),
                           static_cast<long long>(4 * D * D));
  for (const ParameterSlice& s : p.slices) {
    const int64_t R = s.values.dim(0), C = s.values.dim(1);
    const double share = s.tensor_norm > 0 ? 100.0 * s.norm * s.norm / (s.tensor_norm * s.tensor_norm) : 0.0;
    out += format("  %s = %s %s %lld..%lld, [%lld,%lld]: Frobenius norm %.4f (%.1f%% of the tensor's squared norm)\n",
                  s.name.c_str(), s.tensor.c_str(), s.columns ? "columns" : "rows", static_cast<long long>(s.first),
                  static_cast<long long>(s.last), static_cast<long long>(R), static_cast<long long>(C), s.norm, share);
    for (int64_t a = 0; a < R; ++a) {
      out += "    ";
      for (int64_t b = 0; b < C; ++b) out += format("%8.4f", static_cast<double>(s.values[a * C + b]));
      out += "\n";
    }
  }
  return out;
}

}  // namespace mg
