// The --roles table and JSON, built as strings and JSON values (the cli prints them).
#include "report/roles_format.h"

#include <algorithm>

#include "report/text.h"

namespace mg {
namespace {

std::string cell(const std::optional<double>& v, const char* fmt = "%6.3f") { return v ? format(fmt, *v) : "     -"; }

}  // namespace

std::string format_roles(const RoleReport& r) {
  const RoleThresholds& th = r.thresholds;
  std::string out = "head roles: attention-pattern scores in [0, 1], pooled over the query rows of " + r.texts + "\n";
  out += format("  induction over %lld repeated random symbol sequences (seeds 1..%lld, each twice); answer-finding "
                "over %lld probe prompts, at the last position, weight on the answer's source; copy-forward (copy) "
                "at the answer's source, weight on the symbol before it\n",
                static_cast<long long>(r.induction_texts), static_cast<long long>(r.induction_texts),
                static_cast<long long>(r.answer_items));
  out += format("  role: every score at or over its threshold (answer-finding %.2f names it writer, copy-forward %.2f "
                "carrier, as --explain names the chain's heads; induction %.2f, previous-token %.2f, offset-k for "
                "k >= 2 %.2f, current-token %.2f, first-position %.2f), else \"mixed\"; writer and carrier also per "
                "question kind, as name(kind)\n",
                th.answer_finding, th.copy_forward, th.induction, th.previous_token, th.offset, th.current_token,
                th.first_position);
  const bool drops = r.base_accuracy.has_value();
  if (drops)
    out += format("  drop: probe accuracy %.4f minus the accuracy with the head %s-ablated (> 0: the head helps)\n",
                  *r.base_accuracy, r.ablation.c_str());
  // The direct-logit column: the head's mean part of the answer's logit difference.
  const bool logits = std::any_of(r.heads.begin(), r.heads.end(), [](const HeadRoleScores& h) { return h.direct_logit.has_value(); });
  if (logits)
    out += "  dla: the head's mean direct logit attribution at each probe item's answer position, the answer against "
           "the model's best other symbol (inspect-heads --attribution --probe)\n";
  out += "\nhead        prev  offset (k)    cur  first  induct  answer    copy";
  out += std::string(drops ? "    drop" : "") + (logits ? "      dla" : "") + "  role\n";
  for (const HeadRoleScores& h : r.heads) {
    out += format("%-10s  %s  %s (%3lld) %s %s  %s  %s  %s", head_name(h.layer, h.head).c_str(),
                  cell(h.previous_token).c_str(), cell(h.best_offset_score).c_str(),
                  static_cast<long long>(-h.best_offset), cell(h.current_token).c_str(),
                  cell(h.first_position).c_str(), cell(h.induction).c_str(), cell(h.answer_finding).c_str(),
                  cell(h.copy_forward).c_str());
    if (drops) out += "  " + (h.accuracy_drop ? format("%+6.3f", *h.accuracy_drop) : std::string("     -"));
    if (logits) out += "  " + (h.direct_logit ? format("%+7.3f", *h.direct_logit) : std::string("      -"));
    out += "  " + h.role + "\n";
  }
  // Per question kind: a head may find one kind's answers and not another's.
  std::vector<std::string> kinds;
  for (const HeadRoleScores& h : r.heads)
    for (const auto& [kind, score] : h.answer_finding_by_kind)
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  if (kinds.empty()) return out;
  out += "\nper question kind: answer-finding score / copy-forward score";
  out += drops ? " / accuracy drop when ablated" : "";
  out += logits ? " / dla" : "";
  if (drops) {
    out += " (intact:";
    for (const auto& [kind, accuracy] : r.base_accuracy_by_kind) out += format(" %s %.3f", kind.c_str(), accuracy);
    out += ")";
  }
  out += "\nhead      ";
  const int width = 15 + (drops ? 9 : 0) + (logits ? 10 : 0);
  for (const std::string& kind : kinds) out += format("  %*s", width, kind.c_str());
  out += "\n";
  auto value_of = [](const std::vector<std::pair<std::string, double>>& values, const std::string& kind) {
    for (const auto& [k, v] : values)
      if (k == kind) return std::optional<double>(v);
    return std::optional<double>();
  };
  for (const HeadRoleScores& h : r.heads) {
    out += format("%-10s", head_name(h.layer, h.head).c_str());
    for (const std::string& kind : kinds) {
      const auto score = value_of(h.answer_finding_by_kind, kind), copy = value_of(h.copy_forward_by_kind, kind),
                 drop = value_of(h.accuracy_drop_by_kind, kind), logit = value_of(h.direct_logit_by_kind, kind);
      auto number = [](const std::optional<double>& v) { return v ? format("%.3f", *v) : std::string("-"); };
      const std::string pair = number(score) + " / " + number(copy);
      out += drops ? format("  %15s / %6s", pair.c_str(), drop ? format("%+.3f", *drop).c_str() : "-")
                   : format("  %15s", pair.c_str());
      if (logits) out += format(" / %7s", logit ? format("%+.3f", *logit).c_str() : "-");
    }
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json head_roles_json(const HeadRoleScores& h) {
  using json = nlohmann::ordered_json;
  auto optional_number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  auto by_kind = [](const std::vector<std::pair<std::string, double>>& values) {
    if (values.empty()) return json(nullptr);
    json out = json::object();
    for (const auto& [kind, v] : values) out[kind] = v;
    return out;
  };
  return json{{"previous_token", optional_number(h.previous_token)},
              {"best_offset", -h.best_offset},
              {"best_offset_score", optional_number(h.best_offset_score)},
              {"current_token", optional_number(h.current_token)},
              {"first_position", optional_number(h.first_position)},
              {"induction", optional_number(h.induction)},
              {"answer_finding", optional_number(h.answer_finding)},
              {"answer_finding_by_kind", by_kind(h.answer_finding_by_kind)},
              {"copy_forward", optional_number(h.copy_forward)},
              {"copy_forward_by_kind", by_kind(h.copy_forward_by_kind)},
              {"role", h.role},
              {"accuracy_drop", optional_number(h.accuracy_drop)},
              {"accuracy_drop_by_kind", by_kind(h.accuracy_drop_by_kind)},
              {"direct_logit", optional_number(h.direct_logit)},
              {"direct_logit_by_kind", by_kind(h.direct_logit_by_kind)}};
}

nlohmann::ordered_json role_report_json(const RoleReport& r) {
  using json = nlohmann::ordered_json;
  json out = {{"texts", r.texts},
              {"text_count", r.text_count},
              {"induction_texts", r.induction_texts},
              {"answer_items", r.answer_items},
              {"thresholds",
               {{"answer_finding", r.thresholds.answer_finding},
                {"copy_forward", r.thresholds.copy_forward},
                {"induction", r.thresholds.induction},
                {"previous_token", r.thresholds.previous_token},
                {"offset", r.thresholds.offset},
                {"current_token", r.thresholds.current_token},
                {"first_position", r.thresholds.first_position}}}};
  if (r.base_accuracy) {
    out["probe_accuracy"] = *r.base_accuracy;
    json by_kind = json::object();
    for (const auto& [kind, accuracy] : r.base_accuracy_by_kind) by_kind[kind] = accuracy;
    out["probe_accuracy_by_kind"] = std::move(by_kind);
    out["ablation"] = r.ablation;
  }
  json heads = json::array();
  for (const HeadRoleScores& h : r.heads) {
    json one = {{"layer", h.layer}, {"head", h.head}};
    one["roles"] = head_roles_json(h);
    heads.push_back(std::move(one));
  }
  out["heads"] = std::move(heads);
  return out;
}

}  // namespace mg
