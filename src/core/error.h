// Typed errors shared by every layer. Library code throws these and never prints or
// exits; only cli/ turns them into "mini-gpt: error: ..." and an exit status:
// InputError (bad usage, config, text or checkpoint) exits 2, any other Error exits 1.
#pragma once

#include <stdexcept>
#include <string>

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
// cli/ names the option that carried it ("--position 16 is out of range: ..."), so jobs
// never spell a command-line flag. what() reads "position 16 is out of range: ...".
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

// An internal invariant failed: a bug in mini-gpt, reported with file:line.
class InternalError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void check_failed(const char* condition, const std::string& message, const char* file,
                               int line);

}  // namespace mg

// MG_CHECK(cond, message): internal invariants only; user input is validated at the
// boundary with an InputError that names the key or file at fault.
#define MG_CHECK(cond, message)                                    \
  do {                                                             \
    if (!(cond)) ::mg::check_failed(#cond, (message), __FILE__, __LINE__); \
  } while (0)
