#include <gtest/gtest.h>
#include "tensor/tensor.h"
TEST(TensorTest, ReshapeSharesStorage) { auto t = mg::Tensor::zeros({2,3}); auto r = t.reshape({6}); r[4] = 1; EXPECT_EQ(t.at({1,1}), 1.0f); }
