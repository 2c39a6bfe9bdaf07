// Typed errors shared by every layer. Library code throws these and never prints or
// exits; only cli/ turns them into "mini-gpt: error: ..." and an exit status:
// InputError (bad usage, config, text or checkpoint) exits 2, any other Error exits 1.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace mg {

// Base of every error mini-gpt raises on purpose; what() is one line, no trailing period.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something the user handed us is wrong: a config key, a text, a file's contents.
class InputError : public Error {
 public:
  using Error::Error;
};

// A wrong value of an argument the user gave a job. ARGUMENT is the job's name for it
// ("position", "top_k"), DETAIL the rest of the sentence (" 16 is out of range: ...");
// cli/ names the option that carried it ("--position 16 is out of range: ..."), so the
// layers below it never spell a command-line flag. what() reads "position 16 is out of range: ...".
class ArgumentError : public InputError {
 public:
  ArgumentError(const std::string& argument, const std::string& detail)
      : InputError(argument + detail), argument_(argument), detail_(detail) {}
  const std::string& argument() const { return argument_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string argument_, detail_;
};

// An operating-system failure: a file that cannot be written, a full disk.
class IoError : public Error {
 public:
  using Error::Error;
};

// Two tensors whose shapes do not fit together; names both shapes.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// An input error that every rank of a job finds at the same point, after a collective
// that told each of them (their settings disagree): each rank reports it and the job ends
// without MPI_Abort, which would kill the other ranks before they said why.
class JobWideInputError : public InputError {
 public:
  using InputError::InputError;
};

// An internal invariant failed: a bug in mini-gpt, reported with file:line.
class InternalError : public Error {
 public:
  using Error::Error;
};

// TEXT safe to show on one line of a terminal: every control character (C0, DEL, C1
// U+0080-U+009F), the line and paragraph separators U+2028/U+2029, the bidirectional
// overrides (U+202A-U+202E, U+2066-U+2069) and every byte that is not UTF-8 become '?'.
std::string printable_text(std::string_view text);

// An error message as it is shown: printable_text, and every quoted value ("...") or
// unquoted word longer than kMaxShownValue characters cut to that many, followed by its
// length: `"aaaa..." (52428800 characters)`. A 50 MB value stays out of a 52 MB line.
inline constexpr size_t kMaxShownValue = 200;
std::string error_text(std::string_view message);

// Error (exit 1) "WHAT is nan: ..." unless VALUE is finite. A checkpoint's weights may
// each be finite and still overflow float32 in a forward: the non-finite result is
// refused where it arises, not printed as a number (docs/cli.md, exit statuses).
void require_finite(double value, std::string_view what);

[[noreturn]] void check_failed(const char* condition, const std::string& message, const char* file,
                               int line);

}  // namespace mg

// MG_CHECK(cond, message): internal invariants only; user input is validated at the
// boundary with an InputError that names the key or file at fault.
#define MG_CHECK(cond, message)                                    \
  do {                                                             \
    if (!(cond)) ::mg::check_failed(#cond, (message), __FILE__, __LINE__); \
  } while (0)
