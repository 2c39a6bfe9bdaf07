// inspect-heads --compare's table and JSON: each head of model A matched to a head of model
// B (interp/compare.h), beside each head's role in its own model (interp/roles.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "interp/compare.h"
#include "interp/roles.h"

namespace mg {

struct ComparisonReport {
  std::string a, b;    // the two checkpoints, as given
  std::string texts;   // what the patterns were compared on ("the --text", "N probe prompts of FILE ...")
  HeadComparison matching;
  RoleReport roles_a, roles_b;  // on the same texts, each in its own model's vocabulary
};

// The pairs, one line each: A's head and role, B's head and role, the similarity; with
// different head counts, then the heads left unmatched, each with its nearest head.
std::string format_comparison(const ComparisonReport& report);

// ComparisonReport::texts: the --text; COUNT prompts of PROBE_PATH that both vocabularies hold.
std::string compared_text_description();
std::string compared_prompts_description(size_t count, const std::string& probe_path);

// {"a", "b", "texts", "pairs": [{"a" [layer, head], "role_a", "b" [layer, head], "role_b",
// "divergence", "similarity"}]}; when the head counts differ, also "heads_a" and "heads_b"
// ([n_layer, n_head]) and "unmatched": [{"model" "a"|"b", "head" [layer, head], "role",
// "nearest" [layer, head], "divergence", "similarity"}]
nlohmann::ordered_json comparison_json(const ComparisonReport& report);

}  // namespace mg
