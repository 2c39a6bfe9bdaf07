// The request layer (src/request/): what a user asks of inspect-heads, from the command line
// or from the server, as one typed request; the table of modes (request/inspect_modes.h)
// with, per mode, the options it reads, the technique it runs and the writer it uses.
//
// Rule: request may include report, interp, inference, io and the layers below them; never
// train, serve or cli (scripts/check_layers.py). It never prints and never writes a file: a
// mode returns the bytes to print and the files to write, and the caller (cli, serve) does
// it. Errors name arguments as this layer does ("text_file"); the command line shows such
// a name as its option ("--text-file"), the server as its query key ("text_file").
//
// This header: a request's arguments as given (a plain key/value list, what CLI11's options
// and the query string both give) and the errors that name them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace mg {

// (name, value) in the order given, the name as the query spells it ("text_file"). A flag
// given without a value has "". A name may repeat (--compare A B is two "compare"s); the
// parser refuses a repeat where one value is read.
using Arguments = std::vector<std::pair<std::string, std::string>>;

// The value of NAME in ARGS, taken out of them; none when not given, RequestError when
// given twice (serve's run= and step=, which choose the model before the mode reads the rest).
std::optional<std::string> take_argument(Arguments& args, const std::string& name);

// VALUE, argument NAME's, as an integer in [LO, HI]: ArgumentError naming NAME otherwise
// ("top: must be an integer in [1, 10000], found \"x\"").
int64_t integer_argument(const std::string& name, const std::string& value, int64_t lo, int64_t hi);

// How a transport spells an argument's name: the command line as its option ("top_k" is
// "--top-k"), the server as the query key ("top_k"). A name that already starts with '-'
// is shown as it is.
enum class Spelling { command_line, query };
std::string spelled(const std::string& name, Spelling spelling);

// An argument's name in an error's sentence.
struct ArgumentName {
  std::string name;
};

// Words one transport shows and the other does not: a hint naming an option the server
// does not read ("(or --probe FILE)"), a mode's name ("--next-symbol", "/api/next").
struct CommandLineOnly {
  std::string text;
};
struct QueryOnly {
  std::string text;
};

// A refused request whose sentence names one or more arguments, each spelled by whoever
// shows it: RequestError({ArgumentName{"trace"}, " needs ", ArgumentName{"position"}, " P"}).
// what() is the query's spelling.
class RequestError : public InputError {
 public:
  struct Part {
    enum class Kind { text, name, command_line_only, query_only };
    Part(const char* text) : text(text) {}
    Part(std::string text) : text(std::move(text)) {}
    Part(ArgumentName name) : text(std::move(name.name)), kind(Kind::name) {}
    Part(CommandLineOnly words) : text(std::move(words.text)), kind(Kind::command_line_only) {}
    Part(QueryOnly words) : text(std::move(words.text)), kind(Kind::query_only) {}
    std::string text;
    Kind kind = Kind::text;
  };
  explicit RequestError(std::vector<Part> parts);
  std::string message(Spelling spelling) const;

 private:
  std::vector<Part> parts_;
};

// The one line an error of a request is shown as: RequestError and ArgumentError (interp's,
// naming the job's argument) with their names spelled; any other error's what().
std::string request_error_message(const std::exception& error, Spelling spelling);

}  // namespace mg
