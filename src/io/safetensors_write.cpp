// The safetensors writer (docs/checkpoint.md), atomic through io/atomic_file.h: the bytes go
// to a hidden temporary file beside the target, are fsync'ed, and only then renamed over
// the target, so a crash, a full disk or Ctrl-C leaves either the old checkpoint or the
// new one, never half of one. The folder is fsync'ed too, so the rename survives a power cut.
#include <bit>
#include <set>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "io/sha256.h"
#include "core/error.h"

namespace mg {
namespace {

// The data section is the host's float32 bytes, which are the format's only on a
// little-endian machine.
static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian float32");

namespace fs = std::filesystem;

// The JSON header, space-padded to a multiple of 8 bytes so the data section that
// follows it starts 8-byte aligned (as the safetensors library writes it).
std::string build_header(const std::map<std::string, std::string>& metadata,
                         const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    const uint64_t bytes = static_cast<uint64_t>(tensor->numel()) * sizeof(float);
    header[name] = {{"dtype", "F32"}, {"shape", tensor->shape()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::exception& e) {
    throw InternalError(std::string("safetensors header is not valid UTF-8: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace

std::string header_digest(const std::map<std::string, std::string>& metadata,
                          const std::vector<SafetensorsEntry>& entries) {
  Sha256 hash;
  const auto field = [&](const std::string& text) { hash.update(text.c_str(), text.size() + 1); };  // with its NUL
  for (const auto& [key, value] : metadata) {
    if (key == kHeaderSha256Key) continue;
    field(key);
    field(value);
  }
  for (const SafetensorsEntry& entry : entries) {
    field(entry.name);
    std::string shape;
    for (int64_t n : entry.shape) shape += std::to_string(n) + ",";
    field(shape);
    field(std::to_string(entry.begin) + "," + std::to_string(entry.end));
  }
  return hash.hex_digest();
}

void write_safetensors(const fs::path& path, const std::map<std::string, std::string>& metadata,
                       const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  std::set<std::string> names;
  Sha256 data_hash;
  for (const auto& [name, tensor] : tensors) {
    MG_CHECK(tensor != nullptr && tensor->defined(), "write_safetensors: tensor " + name + " has no data");
    MG_CHECK(name != "__metadata__" && names.insert(name).second,
             "write_safetensors: tensor name " + name + " reserved or repeated");
    data_hash.update(tensor->data(), static_cast<size_t>(tensor->numel()) * sizeof(float));
  }
  std::map<std::string, std::string> full_metadata = metadata;
  full_metadata[kDataSha256Key] = data_hash.hex_digest();
  std::vector<SafetensorsEntry> entries;  // as build_header lays them out
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    const uint64_t bytes = static_cast<uint64_t>(tensor->numel()) * sizeof(float);
    entries.push_back({name, tensor->shape(), offset, offset + bytes});
    offset += bytes;
  }
  full_metadata.erase(kHeaderSha256Key);
  full_metadata[kHeaderSha256Key] = header_digest(full_metadata, entries);
  const std::string header = build_header(full_metadata, tensors);

  write_file_atomically(path, [&](int fd) {
    unsigned char length_field[8];  // little-endian u64 header length
    for (int i = 0; i < 8; ++i) length_field[i] = static_cast<unsigned char>(uint64_t(header.size()) >> (8 * i));
    if (int e = write_all(fd, length_field, sizeof length_field)) return e;
    if (int e = write_all(fd, header.data(), header.size())) return e;
    for (const auto& [name, tensor] : tensors)
      if (int e = write_all(fd, tensor->data(), static_cast<size_t>(tensor->numel()) * sizeof(float))) return e;
    return 0;
  });
}

}  // namespace mg
