// libFuzzer target: the config reader with its --set overrides.
// Input: a JSON config, then optionally a line "%%" and one "section.key=value"
// override per line. The config goes through load_config from an in-memory file.
// Checked: it is accepted or refused with a one-line InputError naming the file (any
// other exception is a failure, as the CLI would exit 1 instead of 2); an override either applies and
// leaves a valid config or is refused and leaves the config exactly as it was; and
// every accepted config can be written out (strict JSON, as config.json is) and read
// back, as a checkpoint's metadata is, to the same config.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "io/config.h"
#include "core/error.h"

namespace {

using mg::fuzz::expect;
using mg::fuzz::expect_one_line;
using nlohmann::json;

// config.json is written with the strict handler, so this throws where it would.
std::string written(const mg::Config& config) {
  try {
    return mg::config_to_json(config).dump();
  } catch (const json::exception& e) {
    mg::fuzz::fail(std::string("an accepted config cannot be written as JSON: ") + e.what());
  }
}

void check_round_trip(const mg::Config& config) {
  try {
    mg::validate_config(config);
  } catch (const mg::InputError& e) {
    mg::fuzz::fail(std::string("an accepted config fails validation: ") + e.what());
  }
  const std::string text = written(config);
  try {
    const mg::Config again = mg::config_from_json(json::parse(text), "/elsewhere", "metadata");
    expect(written(again) == text, "config read back differs: " + text + " became " + written(again));
  } catch (const std::exception& e) {
    mg::fuzz::fail("an accepted config, written out, does not read back: " + std::string(e.what()) + " in " + text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string separator = "\n%%\n";
  const size_t split = input.find(separator);
  const std::string config_text = input.substr(0, split);
  std::vector<std::string> overrides;
  if (split != std::string::npos) {
    size_t start = split + separator.size();
    while (start <= input.size()) {
      size_t end = input.find('\n', start);
      if (end == std::string::npos) end = input.size();
      overrides.push_back(input.substr(start, end - start));
      start = end + 1;
    }
  }

  const std::string path = mg::fuzz::as_file(reinterpret_cast<const uint8_t*>(config_text.data()), config_text.size());
  mg::Config config;
  try {
    config = mg::load_config(path);
  } catch (const mg::InputError& e) {
    expect_one_line(e.what());
    expect(std::string(e.what()).rfind(path + ": ", 0) == 0, std::string("error does not name the file: ") + e.what());
    return 0;
  } catch (const std::exception& e) {
    mg::fuzz::fail(std::string("load_config threw something other than an InputError: ") + e.what());
  }
  check_round_trip(config);

  for (const std::string& assignment : overrides) {
    const std::string before = written(config);
    try {
      mg::apply_override(config, assignment);
      check_round_trip(config);
    } catch (const mg::InputError& e) {
      expect_one_line(e.what());
      expect(written(config) == before, "a refused override changed the config: " + assignment);
    } catch (const std::exception& e) {
      mg::fuzz::fail("apply_override(" + assignment + ") threw something other than an InputError: " + e.what());
    }
  }
  return 0;
}
