// inspect-heads' request: every option any mode reads, typed, parsed by one parser from a
// request's arguments (request/arguments.h), so that the command line's options and the
// server's query string are read alike: the same bounds, the same sentences. Which options
// a mode reads is the mode table's (request/inspect_modes.h); this knows each option alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inference/generate.h"
#include "request/arguments.h"

namespace mg {

struct InspectRequest {
  // The model: a checkpoint, or a config freshly initialised with a seed.
  std::string checkpoint, config;
  std::optional<uint64_t> seed;
  std::optional<std::string> text;  // given: --text "" is a text (refused as empty), not an absent one
  std::optional<int64_t> layer, head, position;
  bool weights = false;
  std::string format = "table";  // or "json"
  std::optional<std::string> svg, html, run, probe, text_file;
  std::optional<std::string> trace;  // "L.H"
  std::optional<std::string> answer, against, clean, corrupt;
  std::optional<std::string> swap;  // "value" or "key"
  std::vector<std::string> compare;  // two checkpoints
  bool mean_ablation = false;
  bool replay = false;  // --html --run DIR: a step slider over DIR/evals/
  int64_t top = 10;
  SamplingSettings sampling;         // --next-symbol: temperature, top_k, top_p
  std::vector<std::string> ablate;   // --next-symbol: "L.H" heads zeroed
  std::optional<double> threshold;   // --circuit: ACDC's tau, in [0, 1] (default interp's)
  std::optional<std::string> score_split;  // "L.H": the head whose scores --score-split splits
};

// What an option's value is, for the parser and for the command line's --help.
enum class OptionKind {
  flag,       // no value ("", 1, true, 0, false)
  text,       // any UTF-8 text, checked where it is read
  file,       // a path: the server reads none a request names
  integer,    // in [lo, hi]
  seed,       // an integer in [0, 2^64)
  number,     // a finite double
  fraction,   // a number in [0, 1]
  choice,     // one of choices
  pair,       // two values (--compare A B)
};

struct InspectOption {
  const char* name;     // as the query spells it ("text_file")
  OptionKind kind;
  const char* help;     // the command line's --help line
  int64_t lo = 0, hi = 0;               // integer
  std::vector<std::string> choices = {};  // choice
  // Read by the server too. Not: the files, and what only goes with one (--swap goes with
  // --probe; --mean-ablation with the ablations the server computes once, by zeroing).
  bool served = true;
};

// Every option of inspect-heads that a mode may read, in the order --help lists them.
const std::vector<InspectOption>& inspect_options();
const InspectOption* find_inspect_option(const std::string& name);

// The request ARGS give: each value parsed (ArgumentError naming the option for a value out
// of its bounds), a repeat refused. The mode's own flag (roles, ...) is skipped: the mode
// table reads it.
InspectRequest parse_inspect_request(const Arguments& args);

}  // namespace mg
