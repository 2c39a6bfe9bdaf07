// The --compare table and JSON (report/compare_format.h).
#include "report/compare_format.h"

#include <cstdio>

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
  return out;
}

std::string format_comparison(const ComparisonReport& r) {
  std::string out = "heads of A (" + r.a + ") matched to heads of B (" + r.b +
                    ")\nby their attention patterns on " + r.texts +
                    ": least total Jensen-Shannon divergence (Hungarian); similarity = 1 - JSD / ln 2\n\n"
                    "  A     role in A                       B     role in B                       similarity\n";
  for (const HeadMatch& m : r.matching.matches) {
    char line[256];
    std::snprintf(line, sizeof line, "  %lld.%lld   %-30s  %lld.%lld   %-30s  %.3f\n", static_cast<long long>(m.layer_a),
                  static_cast<long long>(m.head_a), role_of(r.roles_a, m.layer_a, m.head_a).c_str(),
                  static_cast<long long>(m.layer_b), static_cast<long long>(m.head_b),
                  role_of(r.roles_b, m.layer_b, m.head_b).c_str(), m.similarity);
    out += line;
  }
  return out;
}

}  // namespace mg
