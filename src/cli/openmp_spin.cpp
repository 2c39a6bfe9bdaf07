// libgomp's short spin without starting the program again. libgomp reads its waiting
// policy once, in its initializer, before main: GOMP_SPINCOUNT through getenv (and, for a
// few names, secure_getenv). This executable defines both functions, so the dynamic
// linker binds libgomp's calls (and every other library's) to them: they answer
// GOMP_SPINCOUNT with mini-gpt's kGompSpinCount (kernels/runtime.h) when the user set
// neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY, and every other name from the environment
// as the C library does. The program, its loader and its emulator stay the ones the user
// started (an exec of /proc/self/exe used to lose `ld-linux.so.2 mini-gpt`, valgrind and
// qemu), and the environment the program hands on is untouched.
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "kernels/runtime.h"

namespace {

// The value of NAME in the environment, as glibc's getenv finds it: the first "NAME=".
char* environment_value(const char* name) {
  if (name == nullptr || environ == nullptr) return nullptr;
  const size_t length = std::strlen(name);
  if (length == 0) return nullptr;
  for (char** entry = environ; *entry != nullptr; ++entry)
    if (std::strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
  return nullptr;
}

}  // namespace

extern "C" char* getenv(const char* name) noexcept {
  char* value = environment_value(name);
  if (value == nullptr && std::strcmp(name, "GOMP_SPINCOUNT") == 0 &&
      environment_value("OMP_WAIT_POLICY") == nullptr)
    return const_cast<char*>(mg::kGompSpinCount);
  return value;
}

// glibc's: nothing in a set-user-ID or otherwise secure process (AT_SECURE).
extern "C" char* secure_getenv(const char* name) noexcept {
  return ::getauxval(AT_SECURE) != 0 ? nullptr : getenv(name);
}
