// PLACEHOLDER: replaced by the inspect-heads work.
#include "cli/commands.h"
#include "tensor/error.h"

namespace mg::cli {
Run add_inspect_heads_command(CLI::App& app) {
  app.add_subcommand("inspect-heads", "Print each attention head's projected_weights over a text");
  return []() -> int { throw Error("inspect-heads: not implemented yet"); };
}
}  // namespace mg::cli
