// What a call refuses: the message of the InputError it throws, or "" when it throws none.
// (The core layer, which every test links.)
#pragma once

#include <string>
#include <utility>

#include "core/error.h"

namespace mg::test {

template <class F>
std::string input_error_of(F&& call) {
  try {
    std::forward<F>(call)();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace mg::test
