// The explorer's step slider data (report/explorer_replay.h).
#include "report/explorer_replay.h"

#include "report/circuit_format.h"
#include "report/explain_format.h"
#include "report/explorer.h"
#include "report/formation_format.h"
#include "report/roles_format.h"
#include "report/text.h"

namespace mg {
namespace {

using json = nlohmann::ordered_json;

json optional_number(const std::optional<double>& v) { return v ? json(round9(*v)) : json(nullptr); }

json step_json(const ReplayStep& s) {
  const int64_t T = s.inspection.T;
  json heads = json::array();
  for (const HeadInspection& h : s.inspection.heads)
    heads.push_back({{"weights", lower_triangle_base64(h, T)}, {"summary", head_summary_json(h.summary)}});
  json attribution = json::array();
  for (const Attribution& a : s.attribution) {
    json parts = json::array();
    for (const AttributionPart& p : a.parts) parts.push_back(round9(p.difference));
    attribution.push_back({symbol_label(a.answer_symbol), symbol_label(a.against_symbol),
                           round9(a.logit - a.against_logit), std::move(parts)});
  }
  json roles = json::array();
  for (const HeadRoleScores& h : s.roles.heads) roles.push_back(head_pattern_scores_json(h));
  return {{"step", s.step},
          {"loss", optional_number(s.inspection.loss)},
          {"heads", std::move(heads)},
          {"next", next_symbols_compact(s.next)},
          {"attribution", std::move(attribution)},
          {"roles", std::move(roles)},
          {"chain", s.chain ? explanation_json(*s.chain) : json(nullptr)}};
}

}  // namespace

json head_summary_json(const HeadSummary& s) {
  return {{"mean_entropy", round9(s.mean_entropy)},
          {"top_offset", s.top_offset},
          {"top_offset_share", round9(s.top_offset_share)},
          {"first_share", optional_number(s.first_share)},
          {"importance", optional_number(s.importance)},
          {"ablated_loss", optional_number(s.ablated_loss)}};
}

json next_symbols_compact(const std::vector<NextSymbols>& next) {
  json out = json::array();
  for (const NextSymbols& n : next) {
    json top = json::array();
    for (const NextSymbolEntry& e : n.top) top.push_back({e.symbol, round9(e.probability), round9(e.logit)});
    out.push_back(std::move(top));
  }
  return out;
}

json explorer_replay_json(const ExplorerReplay& replay, const std::string& run_dir) {
  json parts = json::array();
  if (!replay.steps.empty() && !replay.steps.front().attribution.empty())
    for (const AttributionPart& p : replay.steps.front().attribution.front().parts)
      parts.push_back({{"name", p.name}, {"part", attribution_part_key(p)}, {"layer", p.layer}, {"head", p.head}});
  // The events as --timeline's JSON gives them; their chains are the steps' own.
  json events = formation_events_json(replay.events, run_dir)["events"];
  for (json& e : events) {
    e.erase("chain_before");
    e.erase("chain_after");
  }
  json steps = json::array();
  for (const ReplayStep& s : replay.steps) steps.push_back(step_json(s));
  return {{"positions", replay.positions}, {"parts", std::move(parts)}, {"events", std::move(events)},
          {"steps", std::move(steps)}};
}

}  // namespace mg
