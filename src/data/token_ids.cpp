// Compact id storage: the narrowest of uint8/uint16/int32 that holds every id below the
// vocabulary size; reads widen to int32, the type the model's kernels take.
#include "data/token_ids.h"

#include <algorithm>

#include "core/error.h"

namespace mg {

template <class F>
decltype(auto) TokenIds::visit(F&& f) const {
  MG_CHECK(storage_ != nullptr || size_ == 0, "TokenIds without storage");
  if (width_ == 1) return f(storage_ ? storage_->u8.data() + offset_ : static_cast<const uint8_t*>(nullptr));
  if (width_ == 2) return f(storage_->u16.data() + offset_);
  return f(storage_->i32.data() + offset_);
}

TokenIds::TokenIds(int64_t count, int64_t vocab_size) : storage_(std::make_shared<Storage>()), size_(count) {
  MG_CHECK(count >= 0 && vocab_size >= 1, "TokenIds needs count >= 0 and vocab_size >= 1");
  const auto n = static_cast<size_t>(count);
  if (vocab_size <= 256) {
    width_ = 1;
    storage_->u8.assign(n, 0);
  } else if (vocab_size <= 65536) {
    width_ = 2;
    storage_->u16.assign(n, 0);
  } else {
    width_ = 4;
    storage_->i32.assign(n, 0);
  }
}

TokenIds TokenIds::from_ids(std::span<const int32_t> ids, int64_t vocab_size) {
  TokenIds out(static_cast<int64_t>(ids.size()), vocab_size);
  out.assign(0, ids);
  return out;
}

void TokenIds::assign(int64_t first, std::span<const int32_t> ids) {
  const auto n = static_cast<int64_t>(ids.size());
  MG_CHECK(first >= 0 && first + n <= size_, "TokenIds::assign past the end");
  const int64_t limit = width_ == 1 ? 256 : width_ == 2 ? 65536 : INT32_MAX;
  for (int32_t id : ids) MG_CHECK(id >= 0 && id < limit, "id " + std::to_string(id) + " does not fit the id width");
  const int64_t at = offset_ + first;
  if (width_ == 1) std::copy(ids.begin(), ids.end(), storage_->u8.begin() + at);
  else if (width_ == 2) std::copy(ids.begin(), ids.end(), storage_->u16.begin() + at);
  else std::copy(ids.begin(), ids.end(), storage_->i32.begin() + at);
}

int32_t TokenIds::operator[](int64_t i) const {
  MG_CHECK(i >= 0 && i < size_, "TokenIds index " + std::to_string(i) + " outside " + std::to_string(size_));
  return visit([&](const auto* ids) { return static_cast<int32_t>(ids[i]); });
}

void TokenIds::copy_to(int64_t first, std::span<int32_t> out) const {
  const auto n = static_cast<int64_t>(out.size());
  MG_CHECK(first >= 0 && first + n <= size_, "TokenIds::copy_to past the end");
  visit([&](const auto* ids) { std::copy(ids + first, ids + first + n, out.begin()); });
}

TokenIds TokenIds::slice(int64_t first, int64_t count) const {
  MG_CHECK(first >= 0 && count >= 0 && first + count <= size_, "TokenIds::slice past the end");
  TokenIds out = *this;
  out.offset_ += first;
  out.size_ = count;
  return out;
}

std::vector<int32_t> TokenIds::to_vector() const {
  std::vector<int32_t> out(static_cast<size_t>(size_));
  if (size_ > 0) copy_to(0, out);
  return out;
}

bool operator==(const TokenIds& a, const TokenIds& b) {
  if (a.size_ != b.size_) return false;
  for (int64_t i = 0; i < a.size_; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace mg
