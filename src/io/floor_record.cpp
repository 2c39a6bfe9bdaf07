// Reading floors.json and matching it against a corpus and a text (io/floor_record.h).
#include "io/floor_record.h"

#include <system_error>

#include "core/error.h"
#include "data/text_file.h"
#include "data/json_limits.h"
#include "io/sha256.h"

namespace mg {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr uint64_t kMaxFloorRecordBytes = uint64_t(1) << 20;

// OBJECT[KEY] when IS says it is of the kind named by KIND; else InputError naming the key.
template <class Is>
const json& field(const json& object, const char* key, Is is, const char* kind, const std::string& origin) {
  const auto it = object.find(key);
  if (it == object.end()) throw InputError(origin + ": " + key + " must be " + kind + ", missing");
  if (!is(*it)) throw InputError(origin + ": " + key + " must be " + kind + ", found " + json_excerpt(*it));
  return *it;
}
std::string text_field(const json& o, const char* key, const std::string& origin) {
  return field(o, key, [](const json& v) { return v.is_string(); }, "a string", origin).get<std::string>();
}
// A floor in nats per symbol: at least 0, and at most the entropy of a uniform choice among
// every Unicode code point, ln(0x110000) = 13.92; a tampered record is refused, not printed.
double floor_field(const json& o, const char* key, const std::string& origin) {
  constexpr double kMaxFloor = 13.93;
  return field(o, key, [](const json& v) { return v.is_number() && v.get<double>() >= 0.0 && v.get<double>() <= kMaxFloor; },
               "in [0, 13.93] nats per symbol", origin)
      .get<double>();
}

std::string file_sha256(const fs::path& path) {
  RegularFile file(path, "corpus", kMaxCorpusBytes);
  Sha256 hash;
  std::string buffer(size_t(1) << 20, '\0');
  while (const size_t got = file.read_some(buffer.data(), buffer.size())) hash.update(buffer.data(), got);
  return hash.hex_digest();
}

}  // namespace

std::optional<FloorRecord> read_floor_record(const fs::path& corpus) {
  const fs::path path = corpus.parent_path() / kFloorRecordName;
  std::error_code error;
  if (!fs::exists(path, error)) return std::nullopt;
  const std::string origin = path.string();
  const std::string text = read_file_bytes(path, "floor record", kMaxFloorRecordBytes);  // errors name the path
  json j;
  try {
    j = parse_json_bounded(text);
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.what());
  }
  if (!j.is_object()) throw InputError(origin + ": must be a JSON object, found " + json_excerpt(j));
  FloorRecord record;
  record.file = path;
  record.corpus_sha256 = text_field(j, "corpus_sha256", origin);
  record.block_size = field(j, "block_size", [](const json& v) { return v.is_number_unsigned(); },
                            "a positive integer", origin).get<int64_t>();
  record.val_fraction = field(j, "val_fraction", [](const json& v) { return v.is_number() && v.get<double>() > 0.0 && v.get<double>() < 1.0; },
                              "a number in (0, 1)", origin).get<double>();
  record.validation_story_rows = floor_field(j, "validation_story_rows", origin);
  const json& texts = field(j, "texts", [](const json& v) { return v.is_array(); }, "an array", origin);
  for (const json& t : texts) {
    if (!t.is_object()) throw InputError(origin + ": texts must hold objects, found " + json_excerpt(t));
    record.texts.push_back({text_field(t, "sha256", origin), floor_field(t, "floor", origin),
                            text_field(t, "about", origin)});
  }
  return record;
}

std::optional<double> known_validation_floor(const Config& config) {
  if (config.data.row_start != "story" || config.data.path.empty()) return std::nullopt;
  const std::optional<FloorRecord> record = read_floor_record(config.data.path);
  if (!record || record->block_size != config.model.block_size || record->val_fraction != config.data.val_fraction ||
      file_sha256(config.data.path) != record->corpus_sha256)
    return std::nullopt;
  return record->validation_story_rows;
}

std::optional<FloorRecord::Text> known_text_floor(const fs::path& corpus, std::string_view text_bytes,
                                                  int64_t block_size) {
  if (corpus.empty()) return std::nullopt;
  const std::optional<FloorRecord> record = read_floor_record(corpus);
  if (!record || record->block_size != block_size) return std::nullopt;
  const std::string hash = sha256_hex(text_bytes);
  for (const FloorRecord::Text& text : record->texts)
    if (text.sha256 == hash) return text;
  return std::nullopt;
}

}  // namespace mg
