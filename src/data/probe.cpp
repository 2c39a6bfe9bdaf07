// Probe-set loading: one JSON object per line, each checked with its line number.
#include "data/probe.h"

#include <nlohmann/json.hpp>

#include "data/text_file.h"
#include "data/utf8.h"
#include "tensor/error.h"

namespace mg {
namespace {

// The string value of KEY, or an InputError naming the line and the key.
std::string string_field(const nlohmann::json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) throw InputError(where + ": missing key \"" + key + "\"");
  if (!it->is_string()) throw InputError(where + ": \"" + key + "\" must be a string, found " + it->dump());
  return it->get<std::string>();
}

}  // namespace

std::vector<ProbeItem> load_probe_set(const std::filesystem::path& path) {
  const std::string bytes = read_file_bytes(path, "probe set");
  decode_utf8(bytes, path.string());  // reports a bad byte by its offset in the whole file

  std::vector<ProbeItem> items;
  size_t line_start = 0;
  for (int64_t line_number = 1; line_start < bytes.size(); ++line_number) {
    size_t line_end = bytes.find('\n', line_start);
    if (line_end == std::string::npos) line_end = bytes.size();
    const std::string line = bytes.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;

    const std::string where = path.string() + ":" + std::to_string(line_number);
    nlohmann::json object;
    try {
      object = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {  // syntax, or a number beyond double
      throw InputError(where + ": not valid JSON (" + e.what() + ")");
    }
    if (!object.is_object()) throw InputError(where + ": expected a JSON object, found " + object.dump());

    ProbeItem item;
    item.prompt = decode_utf8(string_field(object, "prompt", where), where + " prompt");
    if (item.prompt.empty()) throw InputError(where + ": \"prompt\" is empty");
    const std::u32string answer = decode_utf8(string_field(object, "answer", where), where + " answer");
    if (answer.size() != 1)
      throw InputError(where + ": \"answer\" has " + std::to_string(answer.size()) +
                       " symbols, expected exactly 1");
    item.answer = answer[0];
    item.kind = string_field(object, "kind", where);
    items.push_back(std::move(item));
  }
  if (items.empty()) throw InputError("probe set " + path.string() + " holds no items");
  return items;
}

}  // namespace mg
