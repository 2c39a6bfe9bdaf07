// inspect-heads' table of modes (request/inspect_modes.h): one row per mode, the options it
// reads. Any other option given with the mode is refused with one line naming the option
// and the mode (exit 2 on the command line, 400 from the server), so nothing is silently
// ignored; --help prints this table and docs/cli.md quotes it.
#include "request/inspect_modes.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "interp/composition.h"
#include "interp/logit_lens.h"
#include "interp/next_symbol.h"
#include "report/circuit_format.h"
#include "report/compare_format.h"
#include "report/edge_circuit_format.h"
#include "report/explain_format.h"
#include "report/next_symbol_format.h"
#include "report/roles_format.h"
#include "report/formation_format.h"
#include "report/trace_format.h"
#include "request/modes.h"
#include "request/subject.h"
#include "request/timeline.h"

namespace mg {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

const std::vector<std::string> kModelSource = {"checkpoint", "config", "seed"};

bool reads(const InspectMode& mode, const std::string& name) {
  return name == mode.flag || contains(mode.reads, name) || (mode.reads_model_source && contains(kModelSource, name));
}

// The mode's name in a sentence: its option, or "the default view".
RequestError::Part mode_name(const InspectMode& mode) {
  return mode.flag[0] ? RequestError::Part(ArgumentName{mode.flag}) : RequestError::Part(mode.name);
}

// The options the server reads of MODE: its flag when it carries a value (trace=L.H), then
// what it reads, less the files and what goes only with them.
std::vector<std::string> served_reads(const InspectMode& mode) {
  std::vector<std::string> out;
  const InspectOption* own = find_inspect_option(mode.flag);
  if (own && own->kind != OptionKind::flag) out.push_back(mode.flag);
  for (const std::string& name : mode.reads) {
    const InspectOption* o = find_inspect_option(name);
    if (o && o->served && name != "format") out.push_back(name);
  }
  return out;
}

}  // namespace

const std::vector<InspectMode>& inspect_modes() {
  using R = const InspectRequest&;
  using S = const Subject&;
  static const std::vector<InspectMode> modes = {
      mode<Explorer>({"--html", "html", "FILE", "", {"text", "position", "probe", "mean_ablation", "run", "replay"}},
                     check_explorer, compute_explorer, write_explorer),
      mode<HeadTrace>({"--trace", "trace", "L.H", "trace", {"text", "position", "top", "format"}}, check_trace,
                      compute_trace,
                      json_or_text<HeadTrace>([](const HeadTrace& t) { return trace_json(t); }, format_trace)),
      mode<RoleReport>({"--roles", "roles", "", "roles", {"probe", "text_file", "mean_ablation", "format"}}, nullptr,
                       compute_roles, json_or_text(role_report_json, format_roles)),
      mode<HeadCircuits>({"--circuits", "circuits", "", "", {"layer", "head", "svg", "top"}},
                         [](R r) {
                           if (!r.layer || !r.head)
                             throw RequestError({ArgumentName{"circuits"}, " needs ", ArgumentName{"layer"}, " L and ",
                                                 ArgumentName{"head"}, " H"});
                         },
                         compute_circuits, write_circuits),
      mode<ComparisonReport>({"--compare", "compare", "A B", "", {"text", "probe", "format"}, false}, nullptr,
                             compute_comparison, json_or_text(comparison_json, format_comparison)),
      mode<AnyAttribution>({"--attribution", "attribution", "", "attribution",
                            {"text", "position", "answer", "against", "probe", "format"}},
                           nullptr, compute_attribution, write_attribution),
      mode<LogitLens>({"--logit-lens", "logit_lens", "", "logit-lens", {"text", "position", "answer", "top", "format"}},
                      [](R r) { required_text(r, {CommandLineOnly{"--logit-lens"}, QueryOnly{"logit-lens"}}); },
                      compute_logit_lens,
                      json_or_text(logit_lens_json, format_logit_lens)),
      mode<CompositionScores>(
          {"--composition", "composition", "", "composition", {"top", "format"}}, nullptr,
          [](R, S s) { return s.cache ? s.cache->composition : composition_scores(*s.model); },
          [](R r, const CompositionScores& c) {
            return ModeOutput{{}, r.format == "json" ? composition_json(c).dump() + "\n" : format_composition(c, r.top)};
          }),
      mode<AnyPatching>({"--patch", "patch", "", "patch",
                         {"clean", "corrupt", "answer", "against", "probe", "swap", "svg", "top", "format"}},
                        nullptr, compute_patching, write_patching),
      mode<Explanation>({"--explain", "explain", "", "explain", {"probe", "format"}}, nullptr, compute_explanation,
                        json_or_text(explanation_json, format_explanation)),
      mode<EdgeCircuits>({"--circuit", "circuit", "", "circuit", {"probe", "swap", "threshold", "top", "format"}},
                         nullptr, compute_edge_circuits,
                         [](R r, const EdgeCircuits& c) {
                           return ModeOutput{{}, r.format == "json" ? edge_circuits_json(c).dump() + "\n"
                                                                    : format_edge_circuits(c, r.top)};
                         }),
      mode<ScoreSplit>({"--score-split", "score_split", "L.H", "", {"text", "position", "top", "format"}},
                       check_score_split, compute_score_split,
                       [](R r, const ScoreSplit& split) {
                         return ModeOutput{{}, r.format == "json" ? score_split_json(split).dump() + "\n"
                                                                  : format_score_split(split, r.top)};
                       }),
      mode<Timeline>({"--timeline", "timeline", "", "", {"run", "probe", "format"}, false},
                     [](R r) {
                       if (!r.run)
                         throw RequestError({ArgumentName{"timeline"}, " needs ", ArgumentName{"run"}, " DIR, a run directory"});
                     },
                     [](R r, S) { return Timeline{run_timeline(*r.run, r.probe), *r.run}; },
                     [](R r, const Timeline& t) {
                       return ModeOutput{{}, r.format == "json" ? formation_events_json(t.events, t.run_dir).dump() + "\n"
                                                                : format_formation_events(t.events, t.run_dir)};
                     }),
      mode<NextSymbols>(
          {"--next-symbol", "next_symbol", "", "next",
           {"text", "position", "temperature", "top_k", "top_p", "ablate", "answer", "against", "format"}},
          nullptr,
          [](R r, S s) {
            if (!r.text) throw RequestError({CommandLineOnly{"--next-symbol needs --text TEXT"}, QueryOnly{"/api/next needs text"}});
            return next_symbols(*s.model, *s.vocab, argument_text("text", *r.text),
                                {r.position, r.sampling, r.ablate, r.answer, r.against});
          },
          json_or_text(next_symbols_json, format_next_symbols)),
      mode<Patterns>({"the default view", "", "", "patterns",
                      {"text", "layer", "head", "position", "weights", "svg", "format", "probe", "text_file"}},
                     check_patterns, compute_patterns, write_patterns),
  };
  return modes;
}

const InspectMode& choose_mode(const Arguments& args) {
  const std::vector<InspectMode>& modes = inspect_modes();
  auto given = [&](const std::string& name) {
    return std::any_of(args.begin(), args.end(), [&](const auto& a) { return a.first == name; });
  };
  const InspectMode& mode =
      *std::find_if(modes.begin(), modes.end(), [&](const InspectMode& m) { return m.flag[0] == '\0' || given(m.flag); });
  // In the order of the options, so the first refused is the first --help lists.
  for (const InspectOption& option : inspect_options()) {
    const std::string name = option.name;
    if (!given(name) || reads(mode, name)) continue;
    const bool is_mode = std::any_of(modes.begin(), modes.end(), [&](const InspectMode& m) { return name == m.flag; });
    std::vector<RequestError::Part> parts = {ArgumentName{name}, " is not used by ", mode_name(mode)};
    if (is_mode) {
      parts.emplace_back(": give one mode");
    } else {
      std::vector<RequestError::Part> elsewhere;
      for (const InspectMode& m : modes)
        if (reads(m, name)) {
          if (!elsewhere.empty()) elsewhere.emplace_back(", ");
          elsewhere.push_back(mode_name(m));
        }
      if (!elsewhere.empty()) {
        parts.insert(parts.end(), {" (", ArgumentName{name}, " goes with "});
        parts.insert(parts.end(), elsewhere.begin(), elsewhere.end());
        parts.emplace_back(")");
      }
    }
    throw RequestError(std::move(parts));
  }
  return mode;
}

const InspectMode* served_mode(const std::string& api) {
  for (const InspectMode& m : inspect_modes())
    if (m.api[0] && api == m.api) return &m;
  return nullptr;
}

void check_served_arguments(const InspectMode& mode, const Arguments& args) {
  const std::vector<std::string> served = served_reads(mode);
  std::set<std::string> seen;
  for (const auto& [name, value] : args) {
    const InspectOption* o = find_inspect_option(name);
    if (o && (o->kind == OptionKind::file || o->kind == OptionKind::pair))
      throw RequestError({ArgumentName{name}, " names a file: the server reads only the files named when it started"});
    if (name == "format") {
      if (value != "json") throw RequestError({ArgumentName{"format"}, ": the server answers json only"});
      continue;
    }
    if (!contains(served, name)) {
      std::string known;
      for (const std::string& r : served) known += (known.empty() ? "" : ", ") + r;
      throw RequestError({"/api/" + std::string(mode.api) + " does not read \"" + error_text(name) + "\"" +
                          (known.empty() ? " (it reads no option)" : " (it reads " + known + ")")});
    }
    if (!seen.insert(name).second) throw RequestError({ArgumentName{name}, " is given twice"});
  }
}

std::string served_modes_list() {
  std::string out;
  for (const InspectMode& m : inspect_modes())
    if (m.api[0]) out += (out.empty() ? "" : ", ") + std::string(m.api);
  return out;
}

std::string inspect_modes_help() {
  std::string out = "Modes and the options each reads (any other option is refused, exit 2):\n";
  for (const InspectMode& m : inspect_modes()) {
    std::string head = m.flag[0] == '\0' ? std::string("(default view)")
                                         : spelled(m.flag, Spelling::command_line) + (m.usage[0] ? " " : "") + m.usage;
    head.resize(std::max<size_t>(head.size() + 1, 16), ' ');
    std::string line = "  " + head;
    for (const std::string& name : m.reads) line += " " + spelled(name, Spelling::command_line);
    out += line + "\n";
  }
  std::string own_model;  // the modes that read no model source: "--compare and --timeline"
  std::vector<const InspectMode*> own;
  for (const InspectMode& m : inspect_modes())
    if (!m.reads_model_source) own.push_back(&m);
  for (size_t i = 0; i < own.size(); ++i)
    own_model += (i == 0 ? "" : i + 1 == own.size() ? " and " : ", ") + std::string(own[i]->name);
  out += "Every mode but " + own_model + " also reads --checkpoint, --config, --seed; every mode --threads, --backend.\n";
  return out;
}

ModeOutput run_inspect_mode(const InspectMode& mode, const InspectRequest& request) {
  if (mode.check) mode.check(request);
  if (!mode.reads_model_source) return mode.run(request, Subject{});
  const LoadedSubject subject = load_subject(request);
  return mode.run(request, subject.view());
}

}  // namespace mg
