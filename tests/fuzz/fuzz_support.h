// Helpers shared by the libFuzzer targets: a broken invariant aborts (libFuzzer then
// saves the input as a crash reproducer), and every InputError must keep the contract
// of core/error.h, one line naming what is wrong, since the CLI prints it as is.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace mg::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void expect(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// An error message the CLI prints after "mini-gpt: error: ": non-empty and one line
// (no line feed, carriage return or other line break a terminal or log would split on).
inline void expect_one_line(std::string_view message) {
  expect(!message.empty(), "empty error message");
  for (char c : message)
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f')
      fail("error message breaks the line (byte " + std::to_string(static_cast<unsigned char>(c)) + "): " +
           std::string(message));
}

// A file holding exactly these bytes, for readers that take a path: one in-memory file
// (memfd) per process, rewritten for each input, so no disk is touched. Returns its
// path, "/proc/self/fd/N".
inline std::string as_file(const uint8_t* data, size_t size) {
  static const int fd = ::memfd_create("fuzz-input", MFD_CLOEXEC);
  expect(fd >= 0, "memfd_create failed");
  expect(::ftruncate(fd, 0) == 0, "ftruncate failed");
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    expect(n > 0, "pwrite failed");
    done += static_cast<size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace mg::fuzz
