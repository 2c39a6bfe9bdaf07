// eval's printout and JSON line (report/eval_format.h).
#include "report/eval_format.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "report/text.h"

namespace mg {

std::string format_eval(const EvalReport& r) {
  std::string out;
  if (r.text) {
    out += format("loss %.6f nats/symbol over %lld predictions\n", r.text->loss, static_cast<long long>(r.text->predictions));
    if (r.floor)
      out += format("floor %.6f nats/symbol (+%.6f): ", r.floor->floor, r.text->loss - r.floor->floor) +
             printable_text(r.floor->about) + ", recorded in " + printable_text(r.floor_record) + "\n";
  }
  if (!r.probe) return out;
  const ProbeScore& score = *r.probe;
  if (!r.ablated.empty()) {
    std::string list;
    for (const std::string& spec : r.ablated) list += (list.empty() ? "" : ", ") + spec;
    out += std::string("ablated (") + (r.mean_ablation ? "mean" : "zero") + "): " + list + "\n";
  }
  out += format("probe accuracy %.4f over %lld items\n", score.accuracy(), static_cast<long long>(score.items));
  for (size_t k = 0; k < score.kinds.size(); ++k) {
    out += format("  %-12s %.4f  (%lld of %lld)", score.kinds[k].c_str(), score.kind_accuracy(k),
                  static_cast<long long>(score.kind_correct[k]), static_cast<long long>(score.kind_items[k]));
    // The items whose cue alone finds the fact, and those where only binding does.
    if (score.tagged(k))
      out += format("  no distractor %.4f (%lld of %lld), with distractors %.4f (%lld of %lld)", score.alone_accuracy(k),
                    static_cast<long long>(score.alone_correct[k]), static_cast<long long>(score.alone_items[k]),
                    score.distracted_accuracy(k), static_cast<long long>(score.distracted_correct[k]),
                    static_cast<long long>(score.distracted_items[k]));
    out += "\n";
  }
  return out;
}

std::string eval_json_line(const EvalReport& r) {
  using json = nlohmann::ordered_json;
  json fields = json::object();
  if (r.text) {
    fields["loss"] = round9(r.text->loss);
    fields["predictions"] = r.text->predictions;
    if (r.floor) fields["floor"] = round9(r.floor->floor);
  }
  if (r.probe) {
    const ProbeScore& score = *r.probe;
    if (!r.ablated.empty()) {
      fields["ablated"] = r.ablated;
      fields["ablation"] = r.mean_ablation ? "mean" : "zero";
    }
    // The kinds and tags by name (nlohmann::json sorts its keys), as eval has always printed them.
    nlohmann::json by_kind = nlohmann::json::object();
    for (size_t k = 0; k < score.kinds.size(); ++k) by_kind[score.kinds[k]] = score.kind_accuracy(k);
    fields["probe_accuracy"] = score.accuracy();
    fields["probe_accuracy_by_kind"] = std::move(by_kind);
    fields["probe_items"] = score.items;
    const std::vector<TagAccuracy> by_tag = tag_accuracies(score);
    if (!by_tag.empty()) {
      nlohmann::json tags = nlohmann::json::object();
      for (const TagAccuracy& t : by_tag)
        tags[t.kind] = {{"no_distractor", t.no_distractor}, {"no_distractor_items", t.no_distractor_items},
                        {"distractors", t.distractors}, {"distractor_items", t.distractor_items}};
      fields["probe_accuracy_by_tag"] = std::move(tags);
    }
  }
  // One line, "key": value pairs separated by ", " (eval's documented layout), each value compact.
  std::string line = "{";
  for (auto it = fields.begin(); it != fields.end(); ++it)
    line += (it == fields.begin() ? "" : ", ") + json(it.key()).dump() + ": " + it.value().dump();
  return line + "}\n";
}

}  // namespace mg
