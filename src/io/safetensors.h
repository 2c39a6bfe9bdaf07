// The safetensors file format (docs/checkpoint.md), for float32 tensors only:
//   8 bytes little-endian u64 N | N bytes JSON header, space-padded to a multiple of 8 |
//   data: each tensor row-major little-endian float32, contiguous, in file order.
// The writer is atomic (temp file, fsync, rename) and records "data_sha256"; the reader
// refuses anything whose sizes, offsets, dtypes or checksum do not add up, before it
// allocates tensor memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tensor/tensor.h"

namespace mg {

// Metadata key the writer adds: hex SHA-256 of the data section.
inline constexpr const char* kDataSha256Key = "data_sha256";
// And of the header: every other __metadata__ key and value (the config and vocabulary
// included), and every tensor's name, shape and offsets (header_digest). A file with it is
// refused when it does not match (an edited model.rope_base); a file without it loads.
inline constexpr const char* kHeaderSha256Key = "header_sha256";

// A header longer than this is refused before it is read (as the safetensors libraries
// do), so a corrupt length field cannot make us allocate gigabytes.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::vector<std::pair<std::string, Tensor>> tensors;  // in file (data offset) order
};

// One tensor's header entry; begin/end are byte offsets into the data section.
struct SafetensorsEntry {
  std::string name;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Hex SHA-256 of a header's content in a canonical form independent of its JSON spelling:
// each metadata key but header_sha256 with its value (key order), then each entry's name,
// shape and offsets (offset order), every field ended by a NUL.
std::string header_digest(const std::map<std::string, std::string>& metadata,
                          const std::vector<SafetensorsEntry>& entries);

// Writes PATH atomically: a temporary ".NAME.tmp.PID" beside it, fsync, rename over PATH,
// fsync of the folder. metadata gets "data_sha256" and then "header_sha256" added (a
// caller's values are replaced).
// On failure the old PATH is untouched, the temp file is removed, and IoError says
// "cannot write PATH: <strerror>"; a PATH that is not a regular file (a device, FIFO,
// symlink) is refused with an InputError (io/atomic_file.h).
void write_safetensors(const std::filesystem::path& path,
                       const std::map<std::string, std::string>& metadata,
                       const std::vector<std::pair<std::string, const Tensor*>>& tensors);

// Reads in two steps so a caller can check names and shapes before any tensor memory is
// allocated: the constructor reads and validates the header (size, JSON, dtypes, shapes,
// offsets tiling the data section, header_sha256 when present); read_tensors() then reads
// the data and verifies data_sha256 when present. Every refusal is an InputError "PATH: what is wrong".
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }  // offset order
  uint64_t data_bytes() const { return data_bytes_; }

  // Reads every tensor, in offset order; call once.
  std::vector<std::pair<std::string, Tensor>> read_tensors();

 private:
  // Owns the open file; closes it even when the constructor throws.
  struct FileHandle {
    int fd = -1;
    FileHandle() = default;
    FileHandle(const FileHandle&) = delete;
    FileHandle& operator=(const FileHandle&) = delete;
    ~FileHandle();
  };

  [[noreturn]] void refuse(const std::string& what) const;  // InputError "PATH: what"
  void read_exact(uint64_t offset, void* destination, uint64_t size) const;
  void parse_header(const std::string& header_text);
  void parse_entry(const std::string& name, const nlohmann::json& entry);
  void check_tiling();

  std::filesystem::path path_;
  FileHandle file_;
  bool tensors_read_ = false;
  uint64_t data_start_ = 0;  // 8 + header length
  uint64_t data_bytes_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsEntry> entries_;
};

// Header validation, then data, in one call.
SafetensorsFile read_safetensors(const std::filesystem::path& path);

}  // namespace mg
