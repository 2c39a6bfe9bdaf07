// Probe-set loading: one JSON object per line, each checked with its line number.
#include "data/probe.h"

#include <algorithm>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "data/json_limits.h"
#include "data/text_file.h"
#include "data/utf8.h"
#include "core/error.h"

namespace mg {

// A story tells a few facts; a count past this is a typo, not a story.
constexpr int64_t kMaxDistractors = 1000;
// A fact is bound by a symbol or two; --patch --swap key reaches 8 symbols from the source.
constexpr size_t kMaxKeySymbols = 8;
namespace {

// The string value of KEY, or an InputError naming the line and the key.
std::string string_field(const nlohmann::json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) throw InputError(where + ": missing key \"" + key + "\"");
  if (!it->is_string()) throw InputError(where + ": \"" + key + "\" must be a string, found " + json_excerpt(*it));
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
      object = parse_json_bounded(line);  // nesting bounded before parsing (a deep line crashed dump)
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
    if (!object.is_object()) throw InputError(where + ": expected a JSON object, found " + json_excerpt(object));

    ProbeItem item;
    item.prompt = decode_utf8(string_field(object, "prompt", where), where + " prompt");
    if (item.prompt.empty()) throw InputError(where + ": \"prompt\" is empty");
    const std::u32string answer = decode_utf8(string_field(object, "answer", where), where + " answer");
    if (answer.size() != 1)
      throw InputError(where + ": \"answer\" has " + std::to_string(answer.size()) +
                       " symbols, expected exactly 1");
    item.answer = answer[0];
    // The kind is echoed on stdout (train's summary, eval, the roles table): its control
    // characters are '?' from here on, so a file cannot move a terminal's cursor.
    item.kind = printable_text(string_field(object, "kind", where));
    if (auto it = object.find("source"); it != object.end()) {
      const int64_t n = static_cast<int64_t>(item.prompt.size());
      if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= n)
        throw InputError(where + ": \"source\" must be an index into the prompt, 0.." + std::to_string(n - 1) +
                         ", found " + json_excerpt(*it));
      item.source = it->get<int64_t>();
      if (item.prompt[static_cast<size_t>(item.source)] != item.answer)
        throw InputError(where + ": \"source\" " + std::to_string(item.source) +
                         " does not hold the answer symbol in the prompt");
    }
    if (auto it = object.find("distractors"); it != object.end()) {
      if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > kMaxDistractors)
        throw InputError(where + ": \"distractors\" must be an integer in 0.." + std::to_string(kMaxDistractors) +
                         ", found " + json_excerpt(*it));
      item.distractors = it->get<int64_t>();
    }
    if (auto it = object.find("key"); it != object.end()) {
      const int64_t n = static_cast<int64_t>(item.prompt.size());
      if (!it->is_array() || it->empty() || it->size() > kMaxKeySymbols)
        throw InputError(where + ": \"key\" must be a list of 1.." + std::to_string(kMaxKeySymbols) +
                         " indices into the prompt, found " + json_excerpt(*it));
      for (const nlohmann::json& index : *it) {
        if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() >= n ||
            index.get<int64_t>() == item.source ||
            std::find(item.key.begin(), item.key.end(), index.get<int64_t>()) != item.key.end())
          throw InputError(where + ": \"key\" holds " + json_excerpt(index) + ", expected distinct indices 0.." +
                           std::to_string(n - 1) + " other than \"source\"");
        item.key.push_back(index.get<int64_t>());
      }
    }
    if (object.contains("cue")) item.cue = printable_text(string_field(object, "cue", where));
    items.push_back(std::move(item));
  }
  if (items.empty()) throw InputError("probe set " + path.string() + " holds no items");
  return items;
}

ProbeKinds probe_kinds(const std::vector<ProbeItem>& probes) {
  ProbeKinds kinds;
  std::unordered_map<std::string, size_t> index;
  kinds.of_item.reserve(probes.size());
  for (const ProbeItem& item : probes) {
    const auto [it, fresh] = index.try_emplace(item.kind, kinds.names.size());
    if (fresh) kinds.names.push_back(item.kind);
    kinds.of_item.push_back(it->second);
  }
  return kinds;
}

}  // namespace mg
