// inspect-heads' options and model, shared by its modes: the head views
// (inspect_command.cpp) and the circuit modes (inspect_circuit_command.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg::cli {

struct InspectHeadsOptions {
  std::string checkpoint, config, text, format = "table";
  std::optional<std::string> svg;  // optional: "--svg ''" is refused, not ignored
  std::optional<std::string> html, run;  // issue 16: the head explorer page, a run's curves in it
  std::optional<uint64_t> seed;
  std::optional<int64_t> layer, head, position;
  bool weights = false;
  // Issue 15: what each head does.
  std::optional<std::string> trace, probe, text_file;
  std::vector<std::string> compare;  // two checkpoints
  bool roles = false, circuits = false, mean_ablation = false, text_given = false;
  int64_t top = 10;
  // Issue 30: the circuit modes and their inputs.
  bool attribution = false, logit_lens = false, composition = false, patch = false;
  std::optional<std::string> answer, against, clean, corrupt;
  ComputeOptions compute;
};

// The model and its vocabulary, from whichever source the options name.
struct Subject {
  Gpt model;
  Vocab vocab;
  std::string probe_path;  // the config's data.probe_path ("" when none)
};

Subject load_subject(const InspectHeadsOptions& o);
void print(const std::string& text);

// The circuit modes' options on COMMAND (--attribution, --logit-lens, --composition,
// --patch and their inputs).
void add_circuit_options(CLI::App& command, InspectHeadsOptions& o);

// Runs the circuit mode the options name and returns true; false when they name none.
// An option the mode does not use is refused (InputError naming it and the mode), as is a
// circuit input (--answer, --against, --clean, --corrupt) given without its mode.
bool run_circuit_mode(const InspectHeadsOptions& o, const CLI::App& command);

}  // namespace mg::cli
