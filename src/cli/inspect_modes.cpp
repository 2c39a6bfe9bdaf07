// inspect-heads' rules: one row per mode, the options it reads. Any other option given with
// the mode is refused with one line naming the option and the mode (exit 2), so nothing is
// silently ignored; --help prints this table and docs/cli.md quotes it.
#include <algorithm>

#include "cli/inspect_heads.h"
#include "core/error.h"

namespace mg::cli {
namespace {

// Read by every mode: the compute options (and --help, which CLI11 answers first).
const std::vector<std::string> kComputeOptions = {"--threads", "--backend", "--help"};
const std::vector<std::string> kModelSource = {"--checkpoint", "--config", "--seed"};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool reads(const InspectMode& mode, const std::string& name) {
  return name == mode.flag || contains(mode.reads, name) || contains(kComputeOptions, name) ||
         (mode.reads_model_source && contains(kModelSource, name));
}

// The modes that read NAME, for the hint after a refusal ("--run goes with --html").
std::string modes_reading(const std::string& name) {
  std::string modes;
  for (const InspectMode& m : inspect_modes())
    if (reads(m, name)) modes += (modes.empty() ? "" : ", ") + std::string(m.name);
  return modes;
}

}  // namespace

const std::vector<InspectMode>& inspect_modes() {
  static const std::vector<InspectMode> modes = {
      {"--html", "--html", "FILE", [](const InspectHeadsOptions& o) { return o.html.has_value(); },
       {"--text", "--position", "--probe", "--mean-ablation", "--run"}, true, explorer_mode},
      {"--trace", "--trace", "L.H", [](const InspectHeadsOptions& o) { return o.trace.has_value(); },
       {"--text", "--position", "--top", "--format"}, true, trace_mode},
      {"--roles", "--roles", "", [](const InspectHeadsOptions& o) { return o.roles; },
       {"--probe", "--text-file", "--mean-ablation", "--format"}, true, roles_mode},
      {"--circuits", "--circuits", "", [](const InspectHeadsOptions& o) { return o.circuits; },
       {"--layer", "--head", "--svg", "--top"}, true, circuits_mode},
      {"--compare", "--compare", "A B", [](const InspectHeadsOptions& o) { return !o.compare.empty(); },
       {"--text", "--probe", "--format"}, false, compare_mode},
      {"--attribution", "--attribution", "", [](const InspectHeadsOptions& o) { return o.attribution; },
       {"--text", "--position", "--answer", "--against", "--probe", "--format"}, true, attribution_mode},
      {"--logit-lens", "--logit-lens", "", [](const InspectHeadsOptions& o) { return o.logit_lens; },
       {"--text", "--position", "--answer", "--top", "--format"}, true, logit_lens_mode},
      {"--composition", "--composition", "", [](const InspectHeadsOptions& o) { return o.composition; },
       {"--top", "--format"}, true, composition_mode},
      {"--patch", "--patch", "", [](const InspectHeadsOptions& o) { return o.patch; },
       {"--clean", "--corrupt", "--answer", "--against", "--probe", "--swap", "--svg", "--top", "--format"}, true,
       patch_mode},
      {"--explain", "--explain", "", [](const InspectHeadsOptions& o) { return o.explain; }, {"--probe", "--format"}, true,
       explain_mode},
      {"--circuit", "--circuit", "", [](const InspectHeadsOptions& o) { return o.circuit; },
       {"--probe", "--swap", "--threshold", "--top", "--format"}, true, edge_circuit_mode},
      {"--score-split", "--score-split", "L.H", [](const InspectHeadsOptions& o) { return o.score_split.has_value(); },
       {"--text", "--position", "--top", "--format"}, true, score_split_mode},
      {"", "the default view", "", [](const InspectHeadsOptions&) { return true; },
       {"--text", "--layer", "--head", "--position", "--weights", "--svg", "--format", "--probe", "--text-file"}, true,
       default_view},
  };
  return modes;
}

const InspectMode& choose_mode(const InspectHeadsOptions& o, const CLI::App& command) {
  const std::vector<InspectMode>& modes = inspect_modes();
  const InspectMode& mode = *std::find_if(modes.begin(), modes.end(), [&](const InspectMode& m) { return m.chosen(o); });
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_name();
    if (option->count() == 0 || reads(mode, name)) continue;
    const bool is_mode = std::any_of(modes.begin(), modes.end(), [&](const InspectMode& m) { return name == m.flag; });
    const std::string elsewhere = modes_reading(name);
    throw InputError(name + " is not used by " + mode.name +
                     (is_mode ? ": give one mode" : elsewhere.empty() ? "" : " (" + name + " goes with " + elsewhere + ")"));
  }
  return mode;
}

std::string inspect_modes_help() {
  std::string out = "Modes and the options each reads (any other option is refused, exit 2):\n";
  for (const InspectMode& m : inspect_modes()) {
    std::string head = m.flag[0] == '\0' ? std::string("(default view)") : std::string(m.flag) + (m.usage[0] ? " " : "") + m.usage;
    head.resize(std::max<size_t>(head.size() + 1, 16), ' ');
    std::string line = "  " + head;
    for (const std::string& name : m.reads) line += " " + name;
    out += line + "\n";
  }
  out += "Every mode but --compare also reads --checkpoint, --config, --seed; every mode --threads, --backend.\n";
  return out;
}

}  // namespace mg::cli
