// The safetensors reader, hardened like the safetensors libraries: every size is checked
// against the file before it is trusted, the header must describe tensors that tile the
// data section exactly, and nothing is allocated for tensor data until all of that holds.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "data/json_limits.h"
#include "io/safetensors.h"
#include "io/sha256.h"
#include "core/error.h"

namespace mg {
namespace {

std::string offsets_str(uint64_t begin, uint64_t end) {
  std::string text = "[";  // built by appending: GCC 12 misreports "lit" + string&& (-Wrestrict)
  text += std::to_string(begin) + "," + std::to_string(end) + "]";
  return text;
}

}  // namespace

SafetensorsReader::FileHandle::~FileHandle() {
  if (fd >= 0) ::close(fd);
}

// Names and keys come from the file, so control bytes are replaced to keep the message one line.
void SafetensorsReader::refuse(const std::string& what) const {
  std::string message = path_.string() + ": " + what;
  for (char& c : message)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  throw InputError(message);
}

// pread until `size` bytes are in; a file that ends early was truncated under us.
void SafetensorsReader::read_exact(uint64_t offset, void* destination, uint64_t size) const {
  char* p = static_cast<char*>(destination);
  while (size > 0) {
    ssize_t n = ::pread(file_.fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      refuse(std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) refuse("file ends at byte " + std::to_string(offset) + ", sooner than its header says");
    p += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<uint64_t>(n);
  }
}

SafetensorsReader::SafetensorsReader(const std::filesystem::path& path) : path_(path) {
  // O_NONBLOCK: a FIFO would otherwise block the open until a writer came.
  file_.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (file_.fd < 0) refuse(std::string("cannot read: ") + std::strerror(errno));
  struct stat info {};
  if (::fstat(file_.fd, &info) != 0) refuse(std::string("cannot read: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) refuse("not a regular file");
  const uint64_t file_bytes = static_cast<uint64_t>(info.st_size);
  if (file_bytes < 8)
    refuse("file is " + std::to_string(file_bytes) + " bytes, too short for the 8-byte header length");

  unsigned char length_field[8];
  read_exact(0, length_field, 8);
  uint64_t header_bytes = 0;  // little-endian u64
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | length_field[i];
  // Both limits are checked before the header is read, so a corrupt length costs nothing.
  if (header_bytes > kMaxHeaderBytes)
    refuse("header length " + std::to_string(header_bytes) + " exceeds the limit of " +
           std::to_string(kMaxHeaderBytes) + " bytes");
  if (header_bytes > file_bytes - 8)
    refuse("header length " + std::to_string(header_bytes) + " exceeds the " + std::to_string(file_bytes - 8) +
           " bytes that follow it");

  std::string header_text(header_bytes, '\0');
  read_exact(8, header_text.data(), header_bytes);
  data_start_ = 8 + header_bytes;
  data_bytes_ = file_bytes - data_start_;
  parse_header(header_text);
  check_tiling();
  if (auto it = metadata_.find(kHeaderSha256Key); it != metadata_.end()) {
    const std::string found = header_digest(metadata_, entries_);
    if (it->second != found)
      refuse("header checksum mismatch: __metadata__.header_sha256 is " + json_excerpt(it->second, 66) +
             ", the metadata and tensor entries hash to " + found + " (edited or corrupted)");
  }
}

void SafetensorsReader::parse_header(const std::string& header_text) {
  nlohmann::json header;
  try {
    header = parse_json_bounded(header_text);  // nesting bounded, NUL refused
  } catch (const InputError& e) {
    refuse(std::string("header: ") + e.what());
  }
  if (!header.is_object()) refuse("header is not a JSON object, found " + json_excerpt(header));
  for (const auto& [name, entry] : header.items()) {
    if (name != "__metadata__") {
      parse_entry(name, entry);
      continue;
    }
    if (!entry.is_object()) refuse("__metadata__ must be an object of strings, found " + json_excerpt(entry));
    for (const auto& [key, value] : entry.items()) {
      if (!value.is_string())
        refuse("__metadata__." + key + " must be a string, found " + json_excerpt(value));
      metadata_[key] = value.get<std::string>();
    }
  }
}

// One tensor's entry: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, with
// 4 * prod(shape) == end - begin, all in unsigned 64-bit arithmetic with overflow checked.
void SafetensorsReader::parse_entry(const std::string& name, const nlohmann::json& entry) {
  const std::string where = "tensor " + name + ": ";
  if (!entry.is_object()) refuse(where + "header entry must be an object, found " + json_excerpt(entry));
  for (const auto& [key, value] : entry.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets") refuse(where + "unexpected key \"" + key + "\"");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(key)) refuse(where + "header entry lacks \"" + key + "\"");

  const nlohmann::json& dtype = entry["dtype"];
  if (dtype != "F32") refuse(where + "dtype " + json_excerpt(dtype) + " is not supported, expected \"F32\"");

  const nlohmann::json& shape_json = entry["shape"];
  if (!shape_json.is_array()) refuse(where + "shape must be an array, found " + json_excerpt(shape_json));
  SafetensorsEntry parsed;
  parsed.name = name;
  uint64_t count = 1;
  bool overflow = false;
  for (const auto& dim : shape_json) {
    if (!dim.is_number_unsigned())
      refuse(where + "shape " + json_excerpt(shape_json) + " must hold non-negative integers");
    const uint64_t size = dim.get<uint64_t>();
    overflow |= size > uint64_t(std::numeric_limits<int64_t>::max()) || __builtin_mul_overflow(count, size, &count);
    parsed.shape.push_back(static_cast<int64_t>(size));
  }
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(count, uint64_t(sizeof(float)), &bytes);
  if (overflow) refuse(where + "shape " + json_excerpt(shape_json) + " is too large (its byte count overflows)");

  const nlohmann::json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    refuse(where + "data_offsets must be two non-negative integers [begin,end], found " + json_excerpt(offsets));
  parsed.begin = offsets[0].get<uint64_t>();
  parsed.end = offsets[1].get<uint64_t>();
  if (parsed.begin > parsed.end)
    refuse(where + "data_offsets " + offsets_str(parsed.begin, parsed.end) + " end before they begin");
  if (parsed.end - parsed.begin != bytes)
    refuse(where + "data_offsets " + offsets_str(parsed.begin, parsed.end) + " span " +
           std::to_string(parsed.end - parsed.begin) + " bytes, shape " + shape_str(parsed.shape) + " needs " +
           std::to_string(bytes));
  entries_.push_back(std::move(parsed));
}

// Sorted by offset, the tensors must cover [0, data_bytes_) exactly: each starts where
// the previous one ended, and the last ends at the end of the file.
void SafetensorsReader::check_tiling() {
  std::sort(entries_.begin(), entries_.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const auto& entry : entries_) {
    if (entry.begin > covered)
      refuse("gap in the data section: bytes " + offsets_str(covered, entry.begin) +
             " belong to no tensor (tensor " + entry.name + " starts at " + std::to_string(entry.begin) +
             ", expected " + std::to_string(covered) + ")");
    if (entry.begin < covered)
      refuse("tensor " + entry.name + " at data_offsets " + offsets_str(entry.begin, entry.end) +
             " overlaps tensor " + previous->name + ", which ends at " + std::to_string(covered));
    covered = entry.end;
    previous = &entry;
  }
  if (covered > data_bytes_)
    refuse("tensor " + previous->name + " ends at data offset " + std::to_string(covered) + " but the data section holds " +
           std::to_string(data_bytes_) + " bytes (file truncated?)");
  if (covered < data_bytes_)
    refuse(std::to_string(data_bytes_ - covered) + " trailing bytes: the tensors cover " + std::to_string(covered) +
           " bytes of the " + std::to_string(data_bytes_) + "-byte data section");
}

std::vector<std::pair<std::string, Tensor>> SafetensorsReader::read_tensors() {
  MG_CHECK(!tensors_read_, "SafetensorsReader::read_tensors called twice");
  tensors_read_ = true;
  Sha256 data_hash;
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& entry : entries_) {
    // The data section is little-endian float32, which is the host's layout (the writer
    // asserts a little-endian host), so the bytes go straight into the tensor.
    Tensor tensor = Tensor::empty(entry.shape);
    read_exact(data_start_ + entry.begin, tensor.data(), entry.end - entry.begin);
    data_hash.update(tensor.data(), entry.end - entry.begin);
    tensors.emplace_back(entry.name, std::move(tensor));
  }
  if (auto it = metadata_.find(kDataSha256Key); it != metadata_.end()) {
    const std::string found = data_hash.hex_digest();
    if (it->second != found)
      refuse("data checksum mismatch: __metadata__.data_sha256 is " + json_excerpt(it->second, 66) +
             ", the data section hashes to " + found + " (file corrupted)");
  }
  return tensors;
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  SafetensorsReader reader(path);
  SafetensorsFile file;
  file.metadata = reader.metadata();
  file.tensors = reader.read_tensors();
  return file;
}

}  // namespace mg
