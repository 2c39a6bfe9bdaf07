// The --compare table and JSON (report/compare_format.h).
#include "report/compare_format.h"

#include <algorithm>

#include "report/text.h"

namespace mg {
namespace {

// The role of head LAYER.HEAD in REPORT ("?" when it scored no such head).
std::string role_of(const RoleReport& report, int64_t layer, int64_t head) {
  for (const auto& h : report.heads)
    if (h.layer == layer && h.head == head) return h.role;
  return std::string("?");
}

}  // namespace

nlohmann::ordered_json comparison_json(const ComparisonReport& r) {
  nlohmann::ordered_json out = {{"a", r.a}, {"b", r.b}, {"texts", r.texts}, {"pairs", nlohmann::ordered_json::array()}};
  for (const HeadMatch& m : r.matching.matches)
    out["pairs"].push_back({{"a", {m.layer_a, m.head_a}}, {"role_a", role_of(r.roles_a, m.layer_a, m.head_a)},
                            {"b", {m.layer_b, m.head_b}}, {"role_b", role_of(r.roles_b, m.layer_b, m.head_b)},
                            {"divergence", m.divergence}, {"similarity", m.similarity}});
  const HeadComparison& c = r.matching;
  if (c.layers_a * c.heads_a != c.layers_b * c.heads_b) {  // the keys a comparison of equal counts never had
    out["heads_a"] = {c.layers_a, c.heads_a};
    out["heads_b"] = {c.layers_b, c.heads_b};
    out["unmatched"] = nlohmann::ordered_json::array();
    for (const UnmatchedHead& u : c.unmatched) {
      const RoleReport& own = u.model == 'a' ? r.roles_a : r.roles_b;
      out["unmatched"].push_back({{"model", std::string(1, u.model)}, {"head", {u.layer, u.head}},
                                  {"role", role_of(own, u.layer, u.head)}, {"nearest", {u.nearest_layer, u.nearest_head}},
                                  {"divergence", u.divergence}, {"similarity", u.similarity}});
    }
  }
  return out;
}

std::string format_comparison(const ComparisonReport& r) {
  // The role columns are as wide as their longest role (at least 30), so a long one keeps the columns.
  int role_width = 30;
  for (const RoleReport* roles : {&r.roles_a, &r.roles_b})
    for (const auto& h : roles->heads) role_width = std::max(role_width, static_cast<int>(h.role.size()));
  std::string out = "heads of A (" + r.a + ") matched to heads of B (" + r.b +
                    ")\nby their attention patterns on " + r.texts +
                    ": least total Jensen-Shannon divergence (Hungarian); similarity = 1 - JSD / ln 2\n\n" +
                    format("  %-6s  %-*s  %-6s  %-*s  similarity\n", "A", role_width, "role in A", "B", role_width, "role in B");
  for (const HeadMatch& m : r.matching.matches)
    out += format("  %-6s  %-*s  %-6s  %-*s  %.3f\n", head_name(m.layer_a, m.head_a).c_str(), role_width,
                  role_of(r.roles_a, m.layer_a, m.head_a).c_str(), head_name(m.layer_b, m.head_b).c_str(), role_width,
                  role_of(r.roles_b, m.layer_b, m.head_b).c_str(), m.similarity);
  const HeadComparison& c = r.matching;
  if (c.layers_a * c.heads_a != c.layers_b * c.heads_b) {
    auto heads = [](int64_t layers, int64_t per_layer) {
      return std::to_string(layers) + (layers == 1 ? " layer x " : " layers x ") + std::to_string(per_layer) +
             (per_layer == 1 ? " head" : " heads");
    };
    out += "\nA has " + heads(c.layers_a, c.heads_a) + ", B " + heads(c.layers_b, c.heads_b) +
           ": these heads have no partner; nearest, the head of the other model whose patterns are most alike\n";
    for (const UnmatchedHead& u : c.unmatched) {
      const RoleReport& own = u.model == 'a' ? r.roles_a : r.roles_b;
      out += format("  %c %-6s  %-*s  nearest %c %-6s  similarity %.3f\n", u.model == 'a' ? 'A' : 'B',
                    head_name(u.layer, u.head).c_str(), role_width, role_of(own, u.layer, u.head).c_str(),
                    u.model == 'a' ? 'B' : 'A', head_name(u.nearest_layer, u.nearest_head).c_str(), u.similarity);
    }
  }
  return out;
}

std::string compared_text_description() { return "the --text"; }

std::string compared_prompts_description(size_t count, const std::string& probe_path) {
  return std::to_string(count) + " probe prompts of " + probe_path + " that both vocabularies hold";
}

}  // namespace mg
