// A request's arguments and the errors that name them (request/arguments.h).
#include "request/arguments.h"

#include <algorithm>
#include <charconv>

namespace mg {
namespace {

std::string joined(const std::vector<RequestError::Part>& parts, Spelling spelling) {
  std::string out;
  using Kind = RequestError::Part::Kind;
  for (const RequestError::Part& p : parts) {
    if (p.kind == Kind::name) out += spelled(p.text, spelling);
    else if (p.kind == Kind::text || (p.kind == Kind::command_line_only) == (spelling == Spelling::command_line))
      out += p.text;
  }
  return out;
}

}  // namespace

std::string spelled(const std::string& name, Spelling spelling) {
  if (spelling == Spelling::query || name.rfind("-", 0) == 0) return name;
  std::string option = "--" + name;
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

std::optional<std::string> take_argument(Arguments& args, const std::string& name) {
  std::optional<std::string> value;
  for (auto it = args.begin(); it != args.end();) {
    if (it->first != name) {
      ++it;
      continue;
    }
    if (value) throw RequestError({ArgumentName{name}, " is given twice"});
    value = it->second;
    it = args.erase(it);
  }
  return value;
}

int64_t integer_argument(const std::string& name, const std::string& value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const size_t first_digit = value.rfind('-', 0) == 0 ? 1 : 0;
  const bool digits = first_digit < value.size() &&
                      std::all_of(value.begin() + static_cast<std::ptrdiff_t>(first_digit), value.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (!digits || ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    throw ArgumentError(name, ": must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                  "], found \"" + error_text(value) + "\"");
  return v;
}

RequestError::RequestError(std::vector<Part> parts) : InputError(joined(parts, Spelling::query)), parts_(std::move(parts)) {}

std::string RequestError::message(Spelling spelling) const { return joined(parts_, spelling); }

std::string request_error_message(const std::exception& error, Spelling spelling) {
  if (const auto* e = dynamic_cast<const RequestError*>(&error)) return e->message(spelling);
  if (const auto* e = dynamic_cast<const ArgumentError*>(&error)) return spelled(e->argument(), spelling) + e->detail();
  return error.what();
}

}  // namespace mg
