#include "tensor/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "tensor/error.h"

namespace mg {
namespace {

// Freed buffers wait here, by element count, for the next request of the same size.
// 64-byte alignment suits AVX-512 loads and oneDNN's preference.
class BufferPool {
 public:
  float* acquire(int64_t numel) {
    {
      std::lock_guard lock(mutex_);
      auto& free_list = free_[numel];
      if (!free_list.empty()) {
        float* p = free_list.back();
        free_list.pop_back();
        return p;
      }
    }
    size_t bytes = static_cast<size_t>(std::max<int64_t>(numel, 1)) * sizeof(float);
    bytes = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
    return static_cast<float*>(p);
  }
  void release(float* p, int64_t numel) {
    std::lock_guard lock(mutex_);
    free_[numel].push_back(p);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<int64_t, std::vector<float*>> free_;
};

BufferPool& pool() {
  static auto* instance = new BufferPool();  // never destroyed: buffers may outlive statics
  return *instance;
}

std::shared_ptr<float> allocate(int64_t numel) {
  float* p = pool().acquire(numel);
  return std::shared_ptr<float>(p, [numel](float* q) { pool().release(q, numel); });
}

}  // namespace

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
