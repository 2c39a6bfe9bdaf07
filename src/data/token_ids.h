// A corpus's ids, stored compactly: one byte per id when the vocabulary has at most 256
// symbols, two when it has at most 65,536, else four. A 100 MB corpus of ASCII text then
// costs 100 MB of ids, not the 400 MB of int32. The storage is shared and read-only, so
// the training and validation splits and the samplers over them are views of one buffer,
// never copies.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace mg {

class TokenIds {
 public:
  TokenIds() = default;

  // COUNT ids, all 0, each to be below VOCAB_SIZE; fill with assign() before sharing.
  TokenIds(int64_t count, int64_t vocab_size);

  // A compact copy of IDS (each in [0, vocab_size)).
  static TokenIds from_ids(std::span<const int32_t> ids, int64_t vocab_size);

  // Writes ids[0..n) at positions first .. first + n - 1 (the encoder's chunk at a time).
  void assign(int64_t first, std::span<const int32_t> ids);

  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int bytes_per_id() const { return width_; }
  int32_t operator[](int64_t i) const;

  // out[0..n) = ids first .. first + n - 1, widened to int32 (a batch window).
  void copy_to(int64_t first, std::span<int32_t> out) const;

  // Ids first .. first + count - 1, sharing this storage.
  TokenIds slice(int64_t first, int64_t count) const;

  std::vector<int32_t> to_vector() const;

  friend bool operator==(const TokenIds& a, const TokenIds& b);

 private:
  // Exactly one of the three vectors holds the ids (the one of width_ bytes).
  struct Storage {
    std::vector<uint8_t> u8;
    std::vector<uint16_t> u16;
    std::vector<int32_t> i32;
  };
  template <class F>
  decltype(auto) visit(F&& f) const;  // f(const T* ids of this view), T the stored type

  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;  // first id of this view in the storage
  int64_t size_ = 0;    // ids in this view
  int width_ = 1;       // bytes per id: 1, 2 or 4
};

}  // namespace mg
