// The --roles table and JSON (interp/roles.h's RoleReport), built as a string and JSON values
// (the cli prints them; train's head logging writes a head's JSON into metrics.jsonl).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "interp/roles.h"

namespace mg {

// The --roles table: the texts and thresholds, then one line per head with every score,
// the ablation drop when measured, and the role name.
std::string format_roles(const RoleReport& report);

// One head's scores as JSON ({"previous_token", "best_offset" (as an offset, -k),
// "best_offset_score", "current_token", "first_position", "induction", "answer_finding",
// "answer_finding_by_kind" {kind: score}, "copy_forward", "copy_forward_by_kind", "role", "accuracy_drop", "accuracy_drop_by_kind"
// {kind: drop}}; null where not measured), and the whole report.
nlohmann::ordered_json head_roles_json(const HeadRoleScores& scores);
nlohmann::ordered_json role_report_json(const RoleReport& report);

}  // namespace mg
