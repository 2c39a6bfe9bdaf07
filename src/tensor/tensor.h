// Tensor: a float32 array with a row-major shape and contiguous storage.
// Copies share storage (like a shared_ptr); clone() makes a deep copy. Storage comes
// from a pool of freed buffers (the smallest that fits, up to twice the size), so a
// training step that allocates the same buffers every step stops calling malloc after
// the first ones.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mg {

using Shape = std::vector<int64_t>;

std::string shape_str(const Shape& shape);  // "[2,3,4]"
int64_t shape_numel(const Shape& shape);

// What the storage pool has done since the process started. A miss is a request no freed
// buffer of the same size could serve, so it went to the allocator: once buffers are
// planned, a steady-state training step makes none.
struct TensorPoolStats {
  int64_t hits = 0, misses = 0;
  int64_t bytes_held = 0;       // every buffer the pool owns, in use or waiting
  int64_t bytes_in_use = 0;     // held by live tensors
  int64_t peak_bytes_in_use = 0;
};
TensorPoolStats tensor_pool_stats();

// A copy of int32 ids (the batch's token ids an op's backward keeps) in the same pool as
// the tensors' storage, so a steady-state training step takes these from freed buffers too.
// Copies share the ids.
class IdBuffer {
 public:
  IdBuffer() = default;
  explicit IdBuffer(std::span<const int32_t> ids);
  const int32_t* data() const { return storage_.get(); }
  int64_t size() const { return size_; }

 private:
  std::shared_ptr<int32_t> storage_;
  int64_t size_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  static Tensor zeros(Shape shape);
  static Tensor empty(Shape shape);  // uninitialised: every element is written before it is read
  static Tensor full(Shape shape, float value);
  static Tensor from(Shape shape, std::vector<float> values);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const;  // negative counts from the end
  int64_t numel() const { return numel_; }

  float* data() { return storage_.get(); }
  const float* data() const { return storage_.get(); }
  std::span<float> span() { return {data(), static_cast<size_t>(numel_)}; }
  std::span<const float> span() const { return {data(), static_cast<size_t>(numel_)}; }
  float& operator[](int64_t flat_index) { return data()[flat_index]; }
  float operator[](int64_t flat_index) const { return data()[flat_index]; }
  float at(std::initializer_list<int64_t> index) const;  // bounds-checked, for tests

  Tensor reshape(Shape shape) const;  // same storage, same element count
  // Elements [offset, offset + numel(shape)) of this tensor's storage as a tensor of
  // `shape`, sharing the storage (writes show through; it keeps the storage alive).
  Tensor view(int64_t offset, Shape shape) const;
  Tensor clone() const;
  void fill(float value);
  void copy_from(const Tensor& other);  // same numel

 private:
  Tensor(Shape shape, std::shared_ptr<float> storage);
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<float> storage_;
};

}  // namespace mg
