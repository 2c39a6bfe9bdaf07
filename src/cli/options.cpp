// Option checks shared by the subcommands. CLI11's own number validators print their
// bounds as 300-digit doubles ("Value 0 not in range 0.000000 to 1797...") and its
// integer parsing wraps some inputs ("-1" for an unsigned seed); these read the text
// themselves, without wrapping, and state the bound as the user would write it.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "request/arguments.h"

namespace mg::cli {
namespace {

bool all_digits(const std::string& text, size_t from) {
  if (from >= text.size()) return false;
  for (size_t i = from; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

}  // namespace

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        int64_t value = 0;
        const bool digits = all_digits(text, text.rfind('-', 0) == 0 ? 1 : 0);
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (!digits || error != std::errc() || end != text.data() + text.size() || value < lo || value > hi)
          return "must be " + range + ", found \"" + text + "\"";
        return std::string();
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (!all_digits(text, 0) || error != std::errc() || end != text.data() + text.size())
          return "must be an integer in [0, 2^64 - 1 = 18446744073709551615], found \"" + text + "\"";
        return std::string();
      },
      "UINT64");
}

std::string option_name(const std::string& argument) { return spelled(argument, Spelling::command_line); }

void check_standard_output() {
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed)
    throw IoError(std::string("cannot write to standard output: ") +
                  (errno != 0 ? std::strerror(errno) : "write error"));
}

}  // namespace mg::cli
