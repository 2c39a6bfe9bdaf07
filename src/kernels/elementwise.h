// The element-wise loops and re-layouts the autograd ops call: sums, scaled copies,
// broadcasts and the moves between [B,T,D] and heads [B,H,T,d]. Each writes its output
// (accumulate false) or adds into it (true), as the gradient rule (autograd/var.h) asks,
// and splits over the thread pool only past kParallelWork elements (kernels/parallel.h).
#pragma once

#include <cstdint>

namespace mg {

// dst (+)= factor * src, n values.
void add_scaled(float* dst, const float* src, float factor, int64_t n, bool accumulate);

// dst (+)= x * mask, n values (dropout's forward and backward).
void multiply(float* dst, const float* x, const float* mask, int64_t n, bool accumulate);

// out [rows,cols] = a [rows,cols] + b [cols] broadcast over the rows; a null a or b is 0.
void add_broadcast_rows(float* out, const float* a, const float* b, int64_t rows, int64_t cols);

// dst [cols] (+)= sum over r of src [rows,cols]. Each column is summed in row order within
// blocks of kSumRowsBlock rows, then the block sums in block order (then added to dst): the
// same bits for every thread count.
inline constexpr int64_t kSumRowsBlock = 64;
void sum_rows(float* dst, const float* src, int64_t rows, int64_t cols, bool accumulate);

// out [outer,n2,n1,d] (+)= in [outer,n1,n2,d]: swaps the middle axes, moving vectors of d
// floats. [B,T,H,d] <-> [B,H,T,d] is split_heads / merge_heads.
void swap_middle_axes(float* out, const float* in, int64_t outer, int64_t n1, int64_t n2, int64_t d,
                      bool accumulate);

}  // namespace mg
