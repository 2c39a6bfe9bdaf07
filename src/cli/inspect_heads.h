// inspect-heads' options, model and modes: the head views (inspect_command.cpp), the
// circuit modes (inspect_circuit_command.cpp) and the table of which options each mode
// reads (inspect_modes.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "data/probe.h"
#include "data/vocab.h"
#include "nn/gpt.h"
#include "report/inspect_json.h"

namespace mg::cli {

// The single-text modes' options (text, layer, head, position, trace, answer, against,
// clean, corrupt, top, weights) are report/inspect_json.h's InspectRequest, which the
// server fills from a query string; the rest name files or choose the mode.
struct InspectHeadsOptions : InspectRequest {
  std::string checkpoint, config, format = "table";
  std::optional<std::string> svg;  // optional: "--svg ''" is refused, not ignored
  std::optional<std::string> html, run;  // issue 16: the head explorer page, a run's curves in it
  std::optional<uint64_t> seed;
  // Issue 15: what each head does.
  std::optional<std::string> probe, text_file;
  std::vector<std::string> compare;  // two checkpoints
  bool roles = false, circuits = false, mean_ablation = false;
  // Issue 30: the circuit modes.
  bool attribution = false, logit_lens = false, composition = false, patch = false;
  bool explain = false;  // issue 41: each kind's chain, found from the probe
  std::optional<std::string> swap;  // --patch --probe: what each item's corruption changes, "value" or "key"
  bool circuit = false;                     // issue 58: each kind's edge circuit (--circuit)
  std::optional<double> threshold;          // its ACDC threshold
  std::optional<std::string> score_split;   // "L.H": one head's scores split into source pairs
  ComputeOptions compute;
};

// The model and its vocabulary, from whichever source the options name.
struct Subject {
  Gpt model;
  Vocab vocab;
  std::string probe_path;  // the config's data.probe_path ("" when none)
};

Subject load_subject(const InspectHeadsOptions& o);
InspectModel inspect_model(const Subject& s);
void print(const std::string& text);
// The probe set at PATH, refused (InputError, exit 2) when not one of its items can be read
// by the model: each needs a prompt and an answer of the model's vocabulary, and a probe
// mode on such a set would print an empty table or "not learned" for nothing it scored.
std::vector<ProbeItem> readable_probe_set(const std::string& path, const Vocab& vocab);

// The circuit modes' options on COMMAND (--attribution, --logit-lens, --composition,
// --patch and their inputs).
void add_circuit_options(CLI::App& command, InspectHeadsOptions& o);
// --circuit, --threshold and --score-split (inspect_edge_circuit_command.cpp).
void add_edge_circuit_options(CLI::App& command, InspectHeadsOptions& o);

// The modes, each a function of the options (it loads its own model): the head views
// (inspect_command.cpp) and the circuit modes (inspect_circuit_command.cpp).
void default_view(const InspectHeadsOptions& o);  // the matrices, --position, --weights, --svg
void explorer_mode(const InspectHeadsOptions& o);  // --html
void trace_mode(const InspectHeadsOptions& o);
void roles_mode(const InspectHeadsOptions& o);
void circuits_mode(const InspectHeadsOptions& o);
void compare_mode(const InspectHeadsOptions& o);
void attribution_mode(const InspectHeadsOptions& o);
void logit_lens_mode(const InspectHeadsOptions& o);
void composition_mode(const InspectHeadsOptions& o);
void patch_mode(const InspectHeadsOptions& o);
void explain_mode(const InspectHeadsOptions& o);
void edge_circuit_mode(const InspectHeadsOptions& o);
void score_split_mode(const InspectHeadsOptions& o);

// One row of the rules (inspect_modes.cpp): the option that chooses the mode ("" for the
// default view), its name in messages, the options it reads besides the model's source
// and the compute options, and its function.
struct InspectMode {
  const char* flag;
  const char* name;
  const char* usage;  // the mode's own argument, for --help ("FILE", "L.H")
  bool (*chosen)(const InspectHeadsOptions&);
  std::vector<std::string> reads;
  bool reads_model_source;  // --checkpoint, --config, --seed (all but --compare)
  void (*run)(const InspectHeadsOptions&);
};

// The table: one row per mode, the default view last.
const std::vector<InspectMode>& inspect_modes();

// The mode the options choose, after refusing (InputError, one line naming the option and
// the mode) every option given on COMMAND that the mode does not read, a second mode
// included.
const InspectMode& choose_mode(const InspectHeadsOptions& o, const CLI::App& command);

// The table as inspect-heads --help prints it (and docs/cli.md quotes it).
std::string inspect_modes_help();

}  // namespace mg::cli
