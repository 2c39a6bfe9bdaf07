// inspect-heads' text outputs, built as strings (the cli prints them): docs/cli.md's
// JSON, the aligned T x T tables, one query row per head (--position) and the per-head
// parameter slices (--weights). Tables align by terminal display width (report/text.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "interp/patterns.h"
#include "interp/roles.h"
#include "report/roles_format.h"
#include "report/text.h"

namespace mg {

// docs/cli.md's JSON: {"text", "tokens", "layers": [{"layer", "heads": [{"head",
// "projected_weights" [T][T], "summary": {...}}]}]} over the inspected heads. With
// `position`, each head also holds "position_weights" (row P) and the object
// "query_position"; with `parameters` (one per inspected head, same order), "parameters".
// Weights are rounded to 9 significant digits, enough to give back the float. Keys keep
// this order (ordered_json). With `roles` (interp/roles.h), each head also holds its
// "roles" object and the top level "roles_texts", the texts the scores were measured on.
nlohmann::ordered_json inspection_json(const Inspection& r, std::optional<int64_t> position,
                               const std::vector<HeadParameters>* parameters, const RoleReport* roles = nullptr);

// Per head: the T x T weights (rows: query, columns: key, 3 decimals, "-" where masked)
// with the summary under it, and the parameter slices when given.
std::string format_table(const Inspection& r, const std::vector<HeadParameters>* parameters);

// Per head one query row P: "head h ≈ [w0, w1, ...]" at 6 decimals (an exact 0 as "0"),
// then each visible key symbol with its weight.
std::string format_position(const Inspection& r, int64_t position, const std::vector<HeadParameters>* parameters);

// The four slices of one head with their norms and values (4 decimals).
std::string format_parameters(const HeadParameters& p);

// "offset -1 (the previous symbol)", "offset 0 (itself)", "offset -3 (3 symbols back)".
std::string describe_offset(int64_t offset);

// One line: "entropy 0.412 nats · reads offset -1 most (62%) · on position 0 0.083 · importance +0.0421".
std::string summary_line(const HeadSummary& s);

}  // namespace mg
