// `mini-gpt eval`'s printout and its --json line (docs/cli.md, "eval"): the loss over a
// text's windows (with the text's recorded entropy floor when there is one), the probe
// accuracy overall, per kind and per tag, and the heads ablated while scoring it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inference/evaluate.h"
#include "io/floor_record.h"

namespace mg {

struct EvalReport {
  std::optional<EvalResult> text;               // with --text-file
  std::optional<FloorRecord::Text> floor;       // the text's floor, when recorded beside the corpus
  std::string floor_record;                     // the record's file, for the printout
  std::optional<ProbeScore> probe;              // with --probe
  std::vector<std::string> ablated;             // "L.H", as given
  bool mean_ablation = false;
};

// The lines eval prints: "loss ... over N predictions", the floor, the ablated heads, the
// probe accuracy and one line per kind.
std::string format_eval(const EvalReport& r);

// The --json line: {"loss", "predictions", "floor", "ablated", "ablation", "probe_accuracy",
// "probe_accuracy_by_kind", "probe_items", "probe_accuracy_by_tag"}, each only where measured;
// the loss and floor to 9 significant digits.
std::string eval_json_line(const EvalReport& r);

}  // namespace mg
