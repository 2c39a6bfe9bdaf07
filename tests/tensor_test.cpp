// Tensor: shapes and indexing, storage shared by copies, reshapes and views (and kept
// alive by them), deep clones, and the buffer pool's reuse rule (a request takes the
// smallest waiting buffer that holds it and is at most twice its size).
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "tensor/tensor.h"

namespace mg {
namespace {

TEST(TensorTest, ShapeNumelAndRowMajorIndexing) {
  Tensor t = Tensor::from({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.dim(-1), 3);
  EXPECT_EQ(t.at({1, 0}), 3.0f);
  EXPECT_EQ(t.at({1, 2}), 5.0f);
  EXPECT_THROW(t.at({2, 0}), ShapeError);
  EXPECT_THROW(t.at({0}), ShapeError);
  EXPECT_THROW(t.dim(2), ShapeError);
  EXPECT_THROW(Tensor::from({2, 2}, {1, 2, 3}), ShapeError);
  EXPECT_THROW(Tensor::zeros({2, -1}), ShapeError);
  EXPECT_EQ(shape_str({2, 3, 4}), "[2,3,4]");
}

TEST(TensorTest, CopiesAndReshapesShareStorageCloneDoesNot) {
  Tensor t = Tensor::zeros({2, 3});
  Tensor copy = t;
  Tensor flat = t.reshape({6});
  flat[4] = 7.0f;
  EXPECT_EQ(t.at({1, 1}), 7.0f);
  EXPECT_EQ(copy.at({1, 1}), 7.0f);
  Tensor deep = t.clone();
  deep[4] = -1.0f;
  EXPECT_EQ(t.at({1, 1}), 7.0f);
  EXPECT_NE(deep.data(), t.data());
  EXPECT_THROW(t.reshape({4}), ShapeError);
  EXPECT_THROW(t.copy_from(Tensor::zeros({5})), ShapeError);
}

TEST(TensorTest, ViewsAliasTheirRangeAndKeepTheStorageAlive) {
  Tensor row;
  {
    Tensor t = Tensor::from({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    row = t.view(4, {4});  // row 1
    EXPECT_EQ(row.data(), t.data() + 4);
    row[2] = 60.0f;
    EXPECT_EQ(t.at({1, 2}), 60.0f);
    t[5] = 50.0f;
    EXPECT_EQ(row[1], 50.0f);
    EXPECT_THROW(t.view(9, {4}), ShapeError);   // runs past the end
    EXPECT_THROW(t.view(-1, {2}), ShapeError);
  }  // t is gone; the view still owns the storage
  EXPECT_EQ(row[0], 4.0f);
  EXPECT_EQ(row[1], 50.0f);
  EXPECT_EQ(row[3], 7.0f);
}

TEST(TensorTest, PoolReusesAFreedBufferUpToTwiceTheRequest) {
  // Sizes no other test of this binary uses, so the pool's other waiting buffers do not match.
  constexpr int64_t kBig = 100003;
  const float* first = nullptr;
  {
    Tensor t = Tensor::empty({kBig});
    first = t.data();
  }  // released to the pool
  TensorPoolStats before = tensor_pool_stats();
  {
    Tensor again = Tensor::empty({kBig / 2 + 10});  // fits, and kBig <= 2 * request
    EXPECT_EQ(again.data(), first);
    TensorPoolStats after = tensor_pool_stats();
    EXPECT_EQ(after.hits, before.hits + 1);
    EXPECT_EQ(after.misses, before.misses);
    EXPECT_EQ(after.bytes_held, before.bytes_held);
  }
  before = tensor_pool_stats();
  {
    Tensor small = Tensor::empty({kBig / 2 - 10});  // kBig > 2 * request: a fresh buffer
    EXPECT_NE(small.data(), first);
    TensorPoolStats after = tensor_pool_stats();
    EXPECT_EQ(after.misses, before.misses + 1);
    EXPECT_GT(after.bytes_held, before.bytes_held);
    EXPECT_GT(after.bytes_in_use, before.bytes_in_use);
    EXPECT_GE(after.peak_bytes_in_use, after.bytes_in_use);
  }
  EXPECT_EQ(tensor_pool_stats().bytes_in_use, before.bytes_in_use);  // released again
}

TEST(TensorTest, IdBufferCopiesTheIdsIntoAReusedPoolBuffer) {
  constexpr int64_t kIds = 70001;  // a size of its own
  std::vector<int32_t> ids(kIds);
  for (int64_t i = 0; i < kIds; ++i) ids[i] = static_cast<int32_t>(i * 7 - 3);
  const int32_t* first = nullptr;
  {
    IdBuffer saved(ids);
    first = saved.data();
    ids[5] = 0;  // the buffer holds its own copy
    EXPECT_EQ(saved.size(), kIds);
    EXPECT_EQ(saved.data()[5], 32);
    EXPECT_EQ(saved.data()[kIds - 1], static_cast<int32_t>((kIds - 1) * 7 - 3));
  }
  const TensorPoolStats before = tensor_pool_stats();
  IdBuffer again(std::span<const int32_t>(ids).first(kIds - 5));
  EXPECT_EQ(again.data(), first);  // the freed buffer, not a new allocation
  EXPECT_EQ(tensor_pool_stats().misses, before.misses);
  EXPECT_EQ(again.data()[5], 0);
}

TEST(TensorTest, PoolBuffersAre64ByteAligned) {
  for (int64_t n : {1, 3, 17, 1000, 4097}) {
    Tensor t = Tensor::empty({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u) << n;
  }
}

}  // namespace
}  // namespace mg
