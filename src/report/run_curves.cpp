// A run's metrics.jsonl as the pages draw it (report/run_curves.h).
#include "report/run_curves.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "core/error.h"
#include "data/json_limits.h"
#include "data/text_file.h"
#include "report/text.h"

namespace mg {
namespace {

using json = nlohmann::ordered_json;

constexpr size_t kMaxLossPoints = 1000;
constexpr size_t kMaxEvalPoints = 1000;
// What one evaluation may carry onto the page: heads (and layer and head indices) below
// kMaxRunHeads, at most kMaxRunNames scores or kinds per object, names of at most
// kMaxRunNameBytes. mini-gpt's own runs stay far inside (8 x 8 heads, 20 scores).
constexpr int64_t kMaxRunHeads = 4096;
constexpr size_t kMaxRunNames = 64;
constexpr size_t kMaxRunNameBytes = 128;

// A JSON number that is finite (nlohmann keeps 1e308 and, from its own dumps, never NaN;
// a string or a bool is not a number here), as a double.
std::optional<double> finite_number(const nlohmann::json& value) {
  if (!value.is_number()) return std::nullopt;
  const double v = value.get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// The finite member KEY of OBJECT, if any.
std::optional<double> finite_member(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? std::nullopt : finite_number(*it);
}

// {name: finite number} of OBJECT's members, at most kMaxRunNames of them with names of at
// most kMaxRunNameBytes; anything else is left out. Null when nothing is left.
json finite_map(const nlohmann::json& object) {
  json out = json::object();
  if (!object.is_object()) return nullptr;
  for (const auto& [name, value] : object.items()) {
    if (out.size() >= kMaxRunNames) break;
    const auto v = finite_number(value);
    if (v && !name.empty() && name.size() <= kMaxRunNameBytes) out[name] = round9(*v);
  }
  return out.empty() ? json(nullptr) : out;
}

// One head_roles entry as the page draws it: {layer, head, score: number, score_by_kind:
// {kind: number}}, or null when it is not an object with integer layer and head in range.
json head_roles_entry(const nlohmann::json& entry) {
  if (!entry.is_object()) return nullptr;
  const auto layer = entry.find("layer"), head = entry.find("head");
  if (layer == entry.end() || head == entry.end() || !layer->is_number_integer() || !head->is_number_integer())
    return nullptr;
  const int64_t l = layer->get<int64_t>(), h = head->get<int64_t>();
  if (l < 0 || h < 0 || l >= kMaxRunHeads || h >= kMaxRunHeads) return nullptr;
  json out = {{"layer", l}, {"head", h}};
  for (const auto& [name, value] : entry.items()) {
    if (out.size() >= kMaxRunNames || name.empty() || name.size() > kMaxRunNameBytes || name == "layer" ||
        name == "head" || name == "best_offset")
      continue;
    if (const auto v = finite_number(value)) out[name] = round9(*v);
    else if (json by_kind = finite_map(value); !by_kind.is_null()) out[name] = std::move(by_kind);
  }
  return out;
}

// The evaluation's record for the formation events, from the page's entry E (its numbers
// already checked) and the line's own probe_accuracy_by_tag and role names.
RunEvaluation evaluation_record(const json& e, const nlohmann::json& line) {
  RunEvaluation r;
  r.step = static_cast<int64_t>(e["step"].get<double>());
  r.val_loss = e["val_loss"].get<double>();
  if (e.contains("by_kind"))
    for (const auto& [kind, v] : e["by_kind"].items()) r.accuracy_by_kind.emplace_back(kind, v.get<double>());
  if (const auto it = line.find("probe_accuracy_by_tag"); it != line.end() && it->is_object())
    for (const auto& [kind, tags] : it->items()) {
      if (!tags.is_object() || kind.empty() || kind.size() > kMaxRunNameBytes) continue;
      const auto alone = finite_member(tags, "no_distractor"), distracted = finite_member(tags, "distractors");
      if (alone && distracted && r.accuracy_by_tag.size() < kMaxRunNames)
        r.accuracy_by_tag.push_back({kind, round9(*alone), round9(*distracted), 0, 0});
    }
  if (e.contains("head_roles")) {
    std::map<std::pair<int64_t, int64_t>, std::string> roles;  // the role names, which the page's entries leave out
    for (const auto& entry : line["head_roles"]) {
      if (!entry.is_object()) continue;
      const auto l = entry.find("layer"), h = entry.find("head"), role = entry.find("role");
      if (l != entry.end() && h != entry.end() && role != entry.end() && l->is_number_integer() &&
          h->is_number_integer() && role->is_string())
        roles[{l->get<int64_t>(), h->get<int64_t>()}] = role->get<std::string>().substr(0, kMaxRunNameBytes);
    }
    for (const json& h : e["head_roles"]) {
      RunHeadScores scores{h["layer"].get<int64_t>(), h["head"].get<int64_t>(), "", {}};
      if (const auto it = roles.find({scores.layer, scores.head}); it != roles.end()) scores.role = it->second;
      for (const auto& [name, value] : h.items()) {
        if (name == "layer" || name == "head") continue;
        if (value.is_number()) scores.scores.emplace_back(name, value.get<double>());
        else if (value.is_object()) {  // "answer_finding_by_kind": {"who": x} -> "answer_finding.who"
          const std::string base = name.size() > 8 && name.ends_with("_by_kind") ? name.substr(0, name.size() - 8) : name;
          for (const auto& [kind, v] : value.items()) scores.scores.emplace_back(base + "." + kind, v.get<double>());
        }
      }
      r.heads.push_back(std::move(scores));
    }
  }
  return r;
}

}  // namespace

void RunCurves::add_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  ++lines_;
  nlohmann::json j;
  try {
    j = parse_json_bounded(std::string(line));
  } catch (const InputError&) {
    ++skipped_;
    return;
  }
  const auto step = j.is_object() ? finite_member(j, "step") : std::nullopt;
  if (!step) {
    ++skipped_;
    return;
  }
  if (const auto loss = finite_member(j, "loss")) losses_.emplace_back(*step, *loss);
  const auto val_loss = finite_member(j, "val_loss");
  if (!val_loss) return;
  json e = {{"step", *step}, {"val_loss", round9(*val_loss)}};
  if (const auto accuracy = finite_member(j, "probe_accuracy")) e["probe_accuracy"] = round9(*accuracy);
  if (const auto it = j.find("probe_accuracy_by_kind"); it != j.end())
    if (json by_kind = finite_map(*it); !by_kind.is_null()) e["by_kind"] = std::move(by_kind);
  if (const auto it = j.find("head_roles"); it != j.end() && it->is_array()) {
    json heads = json::array();
    for (const auto& entry : *it) {
      if (heads.size() >= static_cast<size_t>(kMaxRunHeads)) break;
      if (json h = head_roles_entry(entry); !h.is_null()) heads.push_back(std::move(h));
    }
    if (!heads.empty()) e["head_roles"] = std::move(heads);
  }
  records_.push_back(evaluation_record(e, j));
  evals_.push_back(std::move(e));
}

json RunCurves::to_json(const std::string& dir) const {
  // Thin the training loss to at most ~kMaxLossPoints means of consecutive steps.
  const size_t bucket = std::max<size_t>(1, (losses_.size() + kMaxLossPoints - 1) / kMaxLossPoints);
  json steps = json::array(), loss = json::array();
  for (size_t i = 0; i < losses_.size(); i += bucket) {
    const size_t end = std::min(losses_.size(), i + bucket);
    double sum = 0.0;
    for (size_t k = i; k < end; ++k) sum += losses_[k].second / static_cast<double>(end - i);  // no overflow at 1e308
    steps.push_back(losses_[end - 1].first);
    loss.push_back(round9(sum));
  }
  // And the evaluations to at most ~kMaxEvalPoints, every stride-th one and always the
  // last: a plot 400 pixels wide shows no more, and a page of 130,000 evaluations each
  // with its head roles would take minutes to draw.
  const size_t stride = std::max<size_t>(1, (evals_.size() + kMaxEvalPoints - 1) / kMaxEvalPoints);
  json kept = json::array();
  for (size_t i = 0; i < evals_.size(); ++i)
    if (i % stride == 0 || i + 1 == evals_.size()) kept.push_back(evals_[i]);
  return {{"dir", dir}, {"lines", lines_}, {"skipped", skipped_}, {"loss_bucket", bucket},
          {"evals_total", evals_.size()}, {"eval_stride", stride},
          {"train", {{"step", steps}, {"loss", loss}}}, {"evals", std::move(kept)}};
}

RunCurves read_run_curves(const std::filesystem::path& run_dir) {
  const std::filesystem::path path = run_dir / "metrics.jsonl";
  const std::string bytes = read_file_bytes(path, "the run's metrics", kMaxMetricsBytes);
  RunCurves curves;
  std::istringstream in(bytes);
  std::string line;
  while (std::getline(in, line)) curves.add_line(line);
  if (curves.lines() == 0) throw InputError(path.string() + " holds no metrics lines");
  return curves;
}

json run_curves(const std::filesystem::path& run_dir) { return read_run_curves(run_dir).to_json(run_dir.string()); }

}  // namespace mg
