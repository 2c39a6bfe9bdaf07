#include "tensor/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <map>
#include <vector>

#include "core/error.h"

namespace mg {
namespace {

// Freed buffers wait here, by capacity (in elements), for the next request. A request
// takes the smallest waiting buffer that holds it and is at most twice its size: tensors
// of different sizes whose lifetimes do not overlap (a step's forward activations and its
// backward's gradients) then share buffers, where an exact-size pool would keep a set
// for each size. 64-byte alignment suits AVX-512 loads and oneDNN's preference.
class BufferPool {
 public:
  struct Buffer {
    float* data;
    int64_t capacity;
  };

  Buffer acquire(int64_t numel) {
    {
      std::lock_guard lock(mutex_);
      // Empty lists are kept (so the map allocates no nodes in a steady state) and skipped.
      for (auto it = free_.lower_bound(numel); it != free_.end() && it->first <= 2 * numel; ++it) {
        if (it->second.empty()) continue;
        float* p = it->second.back();
        it->second.pop_back();
        ++stats_.hits;
        note_in_use(padded_bytes(it->first));
        return {p, it->first};
      }
      ++stats_.misses;
      stats_.bytes_held += padded_bytes(numel);
      note_in_use(padded_bytes(numel));
    }
    void* p = std::aligned_alloc(64, static_cast<size_t>(padded_bytes(numel)));
    if (p == nullptr) throw Error("out of memory allocating " + std::to_string(padded_bytes(numel)) + " bytes");
    return {static_cast<float*>(p), numel};
  }
  void release(Buffer buffer) {
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use -= padded_bytes(buffer.capacity);
    free_[buffer.capacity].push_back(buffer.data);
  }
  TensorPoolStats stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  static int64_t padded_bytes(int64_t numel) {
    return (std::max<int64_t>(numel, 1) * static_cast<int64_t>(sizeof(float)) + 63) / 64 * 64;
  }
  void note_in_use(int64_t bytes) {
    stats_.bytes_in_use += bytes;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  }
  std::mutex mutex_;
  std::map<int64_t, std::vector<float*>> free_;
  TensorPoolStats stats_;
};

BufferPool& pool() {
  static auto* instance = new BufferPool();  // never destroyed: buffers may outlive statics
  return *instance;
}

std::shared_ptr<float> allocate(int64_t numel) {
  const BufferPool::Buffer buffer = pool().acquire(numel);
  return std::shared_ptr<float>(buffer.data, [buffer](float*) { pool().release(buffer); });
}

}  // namespace

IdBuffer::IdBuffer(std::span<const int32_t> ids) : size_(static_cast<int64_t>(ids.size())) {
  static_assert(sizeof(int32_t) == sizeof(float) && alignof(int32_t) <= 64);
  const BufferPool::Buffer buffer = pool().acquire(size_);
  // Placement new starts the int32 objects' lifetime in the pooled bytes (which may have
  // held floats before): the ids are then read as what they are, never through a cast.
  int32_t* p = new (buffer.data) int32_t[std::max<size_t>(ids.size(), 1)];
  std::copy(ids.begin(), ids.end(), p);
  storage_ = std::shared_ptr<int32_t>(p, [buffer](int32_t*) { pool().release(buffer); });
}

TensorPoolStats tensor_pool_stats() { return pool().stats(); }

std::string shape_str(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) throw ShapeError("negative dimension in shape " + shape_str(shape));
    n *= s;
  }
  return n;
}

Tensor::Tensor(Shape shape, std::shared_ptr<float> storage)
    : shape_(std::move(shape)), numel_(shape_numel(shape_)), storage_(std::move(storage)) {}

Tensor Tensor::empty(Shape shape) {
  int64_t n = shape_numel(shape);
  return Tensor(std::move(shape), allocate(n));
}

Tensor Tensor::zeros(Shape shape) { return full(std::move(shape), 0.0f); }

Tensor Tensor::full(Shape shape, float value) {
  Tensor t = empty(std::move(shape));
  t.fill(value);
  return t;
}

Tensor Tensor::from(Shape shape, std::vector<float> values) {
  Tensor t = empty(std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw ShapeError("Tensor::from: shape " + shape_str(t.shape()) + " holds " +
                     std::to_string(t.numel()) + " values, given " + std::to_string(values.size()));
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

int64_t Tensor::dim(int axis) const {
  int r = rank();
  int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw ShapeError("axis " + std::to_string(axis) + " out of range for shape " + shape_str(shape_));
  return shape_[a];
}

float Tensor::at(std::initializer_list<int64_t> index) const {
  if (static_cast<int>(index.size()) != rank())
    throw ShapeError("index of rank " + std::to_string(index.size()) + " into shape " + shape_str(shape_));
  int64_t flat = 0;
  int axis = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_[axis])
      throw ShapeError("index " + std::to_string(i) + " out of range on axis " + std::to_string(axis) +
                       " of shape " + shape_str(shape_));
    flat = flat * shape_[axis] + i;
    ++axis;
  }
  return data()[flat];
}

Tensor Tensor::reshape(Shape shape) const {
  if (shape_numel(shape) != numel_)
    throw ShapeError("cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  return Tensor(std::move(shape), storage_);
}

Tensor Tensor::view(int64_t offset, Shape shape) const {
  const int64_t n = shape_numel(shape);
  if (offset < 0 || offset + n > numel_)
    throw ShapeError("view of " + shape_str(shape) + " at offset " + std::to_string(offset) +
                     " does not fit in " + shape_str(shape_));
  // The aliasing constructor: shares ownership of the whole storage, points into it.
  return Tensor(std::move(shape), std::shared_ptr<float>(storage_, storage_.get() + offset));
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_);
  if (numel_) std::memcpy(t.data(), data(), static_cast<size_t>(numel_) * sizeof(float));
  return t;
}

void Tensor::fill(float value) { std::fill_n(data(), numel_, value); }

void Tensor::copy_from(const Tensor& other) {
  if (other.numel() != numel_)
    throw ShapeError("copy_from: " + shape_str(other.shape()) + " into " + shape_str(shape_));
  if (numel_) std::memcpy(data(), other.data(), static_cast<size_t>(numel_) * sizeof(float));
}

}  // namespace mg
