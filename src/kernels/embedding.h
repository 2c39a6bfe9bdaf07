// Embedding lookup: out[n] = table[ids[n]]; backward scatter-adds rows into dtable.
#pragma once

#include <cstdint>

namespace mg {

// table [V,D], ids [n], out [n,D].
void embedding_forward(float* out, const float* table, const int32_t* ids, int64_t n, int64_t D);
// dtable[ids[i]] += dout[i]; repeated ids add up.
void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int64_t n, int64_t D);

}  // namespace mg
