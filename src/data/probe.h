// The probe set: held-out questions whose next symbol has exactly one right answer
// (data/README.md). Training reports the share a model gets right by arg-max, a direct
// measure of whether its attention reads back to the fact the question asks about.
// File format: JSON lines, {"answer": "X", "kind": "who", "prompt": "..."}.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mg {

struct ProbeItem {
  std::u32string prompt;  // the text up to, not including, the answer symbol
  char32_t answer;        // the one right next symbol
  std::string kind;       // "who", "colour", "what", ...
  // Optional "source": the index in the prompt of the symbol the answer copies (the
  // answer's occurrence in the fact the question asks about); -1 when the line has none.
  int64_t source = -1;
  // Optional "distractors": how many other facts of the item's story share the question's
  // cue (data/README.md). 0: the cue alone finds the fact; 1 or more: only binding the name
  // (or the object) to its fact does. -1 when the line has none.
  int64_t distractors = -1;
  // Optional "cue": what a distractor shares with the asked fact ("verb", "colour", "verb
  // and colour"): the one-symbol shortcut that --explain names when only the items without
  // distractors are answered. Empty when the line has none.
  std::string cue;
  // Optional "key": the prompt's indices of the symbols of the asked fact that bind it (the
  // name, or the object's first symbol): what --patch --swap key replaces (interp/patching.h).
  std::vector<int64_t> key;
};

// Reads PATH. Blank lines are skipped; every other line must be a JSON object with a
// non-empty string "prompt", a one-symbol string "answer" and a string "kind", and may
// have "source", an integer index into the prompt whose symbol is the answer, and
// "distractors", a non-negative integer (other keys are ignored). InputError "PATH:LINE: ..." on the first bad line; an empty set is an error.
std::vector<ProbeItem> load_probe_set(const std::filesystem::path& path);

// The kinds of PROBES in order of first appearance, and each item's index among them: one
// hash lookup per item, so that a set with a distinct kind per item stays linear.
struct ProbeKinds {
  std::vector<std::string> names;
  std::vector<size_t> of_item;  // [probes.size()] index into names
};
ProbeKinds probe_kinds(const std::vector<ProbeItem>& probes);

}  // namespace mg
