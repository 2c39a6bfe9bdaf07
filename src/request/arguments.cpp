// A request's arguments and the errors that name them (request/arguments.h).
#include "request/arguments.h"

#include <algorithm>

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

RequestError::RequestError(std::vector<Part> parts) : InputError(joined(parts, Spelling::query)), parts_(std::move(parts)) {}

std::string RequestError::message(Spelling spelling) const { return joined(parts_, spelling); }

std::string request_error_message(const std::exception& error, Spelling spelling) {
  if (const auto* e = dynamic_cast<const RequestError*>(&error)) return e->message(spelling);
  if (const auto* e = dynamic_cast<const ArgumentError*>(&error)) return spelled(e->argument(), spelling) + e->detail();
  return error.what();
}

}  // namespace mg
