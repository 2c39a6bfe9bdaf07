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
// The pattern scores alone (head_roles_json without the ablation and attribution columns):
// what each of training's evaluations logs per head into metrics.jsonl.
nlohmann::ordered_json head_pattern_scores_json(const HeadRoleScores& scores);
nlohmann::ordered_json role_report_json(const RoleReport& report);

// The sentence a report gives for the texts its pattern scores were averaged over
// (RoleOptions::texts_description): COUNT prompts of the probe set PROBE_NAME; the
// inspected text alone; COUNT windows of FILE; the explorer page's text alone; the probe
// prompts of a training run's evaluation.
std::string probe_prompts_description(size_t count, const std::string& probe_name);
std::string text_alone_description();
std::string text_windows_description(size_t count, int64_t block_size, const std::string& file);
std::string page_text_description();
std::string training_probe_description();

}  // namespace mg
