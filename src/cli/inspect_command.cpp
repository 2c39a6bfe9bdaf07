// `mini-gpt inspect-heads`: what each attention head reads in a text, and the circuit modes
// (docs/cli.md). The options and the modes are the request layer's (request/inspect_modes.h):
// this registers each option with CLI11, hands what was given to the request's parser,
// writes the files the mode made and prints what it printed.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "request/inspect_modes.h"
#include "request/inspect_request.h"

namespace mg::cli {

Run add_inspect_heads_command(CLI::App& app) {
  // Each option's values as given, in CLI11's hands until the command runs.
  auto values = std::make_shared<std::map<std::string, std::vector<std::string>>>();
  auto compute = std::make_shared<ComputeOptions>();
  CLI::App* cmd = app.add_subcommand("inspect-heads",
                                     "Print what each attention head reads in a text: its projected_weights "
                                     "(softmax of the scaled, masked Q.K scores) with a summary per head");
  std::vector<std::pair<std::string, CLI::Option*>> options;
  for (const InspectOption& o : inspect_options()) {
    const std::string option = spelled(o.name, Spelling::command_line);
    std::vector<std::string>& into = (*values)[o.name];
    // One value an occurrence (two for --compare A B), a second occurrence refused by CLI11
    // as before; a flag's every occurrence kept, its value the parser's to check.
    CLI::Option* added = o.kind == OptionKind::flag
                             ? cmd->add_flag(option, into, o.help)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                             : cmd->add_option(option, into, o.help)
                                   ->expected(o.kind == OptionKind::pair ? 2 : 1)
                                   ->allow_extra_args(false);
    if (o.kind != OptionKind::flag && o.kind != OptionKind::pair)
      added->multi_option_policy(CLI::MultiOptionPolicy::Throw);
    options.emplace_back(o.name, added);
  }
  // The model's two sources exclude each other on the command line, as CLI11 says it.
  auto option_of = [&](const char* name) {
    return std::find_if(options.begin(), options.end(), [&](const auto& o) { return o.first == name; })->second;
  };
  option_of("config")->excludes(option_of("checkpoint"));
  compute->add_to(*cmd);
  cmd->footer(inspect_modes_help());

  return [values, compute, options]() {
    // The arguments as the request layer reads them: (name, value), a flag as "".
    Arguments args;
    for (const auto& [name, option] : options)
      for (const std::string& value : (*values)[name])
        args.emplace_back(name, option->get_expected_min() == 0 && value == "true" ? "" : value);
    const InspectMode& mode = choose_mode(args);  // before any work: an unused option is refused
    const InspectRequest request = parse_inspect_request(args);
    compute->apply();
    const ModeOutput out = run_inspect_mode(mode, request);
    // The files first: if one cannot be written, nothing has been printed yet. An output
    // that is not a regular file (a device, FIFO, symlink) is refused, not replaced.
    for (const auto& [path, bytes] : out.files) write_text_atomically(path, bytes);
    std::fwrite(out.text.data(), 1, out.text.size(), stdout);
    std::fflush(stdout);
    for (const std::string& warning : out.warnings) std::fprintf(stderr, "mini-gpt: warning: %s\n", warning.c_str());
    return kExitOk;
  };
}

}  // namespace mg::cli
