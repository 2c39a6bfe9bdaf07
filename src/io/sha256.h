// SHA-256 (FIPS 180-4), streaming: a checkpoint's "data_sha256" metadata is the hex digest
// of its data section, so a flipped byte on disk is caught at load time instead of
// silently changing the model.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mg {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // Finishes the hash; the object must not be updated afterwards.
  std::array<uint8_t, 32> digest();
  std::string hex_digest();  // 64 lowercase hex digits

 private:
  void compress(const uint8_t* block);  // one 64-byte block into state_

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};  // the partial block not yet compressed
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool finished_ = false;
};

// Hex SHA-256 of a byte string in one call.
std::string sha256_hex(std::string_view bytes);

}  // namespace mg
