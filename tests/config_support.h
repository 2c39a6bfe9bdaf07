// The tiny run configuration for the tests (the io layer).
#pragma once

#include <filesystem>

#include "io/config.h"
#include "test_support.h"

namespace mg::test {

// configs/tiny.json with the run directory moved into `dir`.
inline Config tiny_config(const std::filesystem::path& dir) {
  Config c = load_config(source_dir() / "configs" / "tiny.json");
  c.train.out_dir = dir.string();
  return c;
}

}  // namespace mg::test
