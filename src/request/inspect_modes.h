// inspect-heads' modes, one row each: the table that the command line (cli/inspect_command.cpp)
// and the server (serve/api.cpp) both read, so a mode is added once.
//
// A row (see inspect_modes.cpp; docs/development.md, "A new technique"):
//   mode<Result>({name, flag, usage, api, {options it reads}, reads_model_source},
//                check,     // optional: refusals before the model is loaded
//                compute,   // Result(const InspectRequest&, const Subject&): the technique (interp)
//                write)     // ModeOutput(const InspectRequest&, const Result&): report's writer
// where Result is the technique's struct (interp's HeadTrace, LogitLens, ...) and
// json_or_text(report's JSON writer, report's table writer) is the usual write.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/probe.h"
#include "data/vocab.h"
#include "interp/circuit_edges.h"
#include "interp/composition.h"
#include "interp/explain.h"
#include "interp/roles.h"
#include "nn/gpt.h"
#include "request/arguments.h"
#include "request/inspect_request.h"

namespace mg {

// What the server computes once per model (request/subject.h's cache_for), read by the
// modes instead of computing it per request.
struct SubjectCache {
  std::optional<RoleReport> pattern_roles;  // the default view's roles on the served probe set
  std::optional<RoleReport> roles;          // --roles' report (zero-ablation columns)
  CompositionScores composition;
  // --explain's chains and --circuit's circuits on the served probe set (PROBES, which
  // outlive the cache; null or empty: none), each found at its first request (the probe's
  // patching: seconds on the default model; the circuits' search: up to a minute) and kept
  // (request/subject.h's cached_explanation and cached_edge_circuits).
  const std::vector<ProbeItem>* probes = nullptr;
  template <class Result>
  struct Once {
    std::once_flag once;
    std::optional<Result> result;
    std::string error;  // why there is none
  };
  std::shared_ptr<Once<Explanation>> explanation = std::make_shared<Once<Explanation>>();
  std::shared_ptr<Once<EdgeCircuits>> edge_circuits = std::make_shared<Once<EdgeCircuits>>();
};

// The model a request reads.
struct Subject {
  const Gpt* model = nullptr;  // null for a mode that loads its own (--compare)
  const Vocab* vocab = nullptr;
  std::string probe_path;  // the model's config's data.probe_path ("" when none)
  std::string source;      // how the model was made, as the explorer page says it
  const SubjectCache* cache = nullptr;  // the server's
};

// What a mode gives back: the files to write, in order, before anything is printed (a
// picture that cannot be written leaves nothing printed), then the bytes to print.
struct ModeOutput {
  std::vector<std::pair<std::string, std::string>> files;  // (path, bytes)
  std::string text;
  // Said to the person running it besides the text (the command line's stderr,
  // "mini-gpt: warning: ..."); the server's JSON carries its own "warning".
  std::vector<std::string> warnings;
};

struct InspectMode {
  const char* name;   // in messages: "--trace"; "the default view"
  const char* flag;   // the argument that chooses it ("trace"); "" for the default view
  const char* usage;  // the flag's own value in --help ("L.H")
  const char* api;    // served as /api/API; "" when not
  std::vector<std::string> reads;  // the options it reads besides its flag, the model's source and the compute options
  bool reads_model_source = true;  // checkpoint, config, seed (all but --compare)
  std::function<void(const InspectRequest&)> check;  // refusals before any work
  std::function<ModeOutput(const InspectRequest&, const Subject&)> run;  // compute, then write
};

// A row from its typed parts: the technique's RESULT computed, then written.
struct ModeInfo {
  const char* name;
  const char* flag;
  const char* usage;
  const char* api;
  std::vector<std::string> reads;
  bool reads_model_source = true;
};
template <class Result>
InspectMode mode(ModeInfo info, std::function<void(const InspectRequest&)> check,
                 std::function<Result(const InspectRequest&, const Subject&)> compute,
                 std::function<ModeOutput(const InspectRequest&, const Result&)> write) {
  return InspectMode{info.name, info.flag, info.usage, info.api, std::move(info.reads), info.reads_model_source,
                     std::move(check),
                     [compute = std::move(compute), write = std::move(write)](const InspectRequest& r, const Subject& s) {
                       return write(r, compute(r, s));
                     }};
}

// The usual writer: report's JSON (one line) with --format json, else its table.
template <class Result>
std::function<ModeOutput(const InspectRequest&, const Result&)> json_or_text(
    nlohmann::ordered_json (*json)(const Result&), std::string (*text)(const Result&)) {
  return [json, text](const InspectRequest& r, const Result& result) {
    return ModeOutput{{}, r.format == "json" ? json(result).dump() + "\n" : text(result)};
  };
}

// The table: one row per mode, the default view last.
const std::vector<InspectMode>& inspect_modes();

// The mode the command line's arguments choose (the row whose flag is given, else the
// default view), after refusing every argument the mode does not read, a second mode's
// flag included (RequestError, one line naming the argument and the mode).
const InspectMode& choose_mode(const Arguments& args);

// The mode served at /api/API, or null. answer_api's refusals: an argument that names a
// file (the server reads only those named when it started), one the mode does not read,
// "format" other than json.
const InspectMode* served_mode(const std::string& api);
void check_served_arguments(const InspectMode& mode, const Arguments& args);

// The modes served, in the table's order ("patterns, trace, ...").
std::string served_modes_list();

// The table as inspect-heads --help prints it (and docs/cli.md quotes it).
std::string inspect_modes_help();

// A mode run from the command line: its checks, its model loaded (request/subject.h), its output.
ModeOutput run_inspect_mode(const InspectMode& mode, const InspectRequest& request);

}  // namespace mg
