#include "cli/commands.h"
#include "tensor/error.h"

namespace mg::cli {
// Filled in by the sample issue.
Run add_sample_command(CLI::App& app) {
  app.add_subcommand("sample", "Generate text from a checkpoint");
  return []() -> int { throw Error("sample: not implemented yet"); };
}
Run add_inspect_heads_command(CLI::App& app) {
  app.add_subcommand("inspect-heads", "Print each attention head's projected_weights over a text");
  return []() -> int { throw Error("inspect-heads: not implemented yet"); };
}
}  // namespace mg::cli
