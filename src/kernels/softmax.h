// Causal softmax over the last axis of scores [batch, Tq, Tk]. Query row i sits at
// absolute position Tk - Tq + i, and sees keys s <= Tk - Tq + i; the rest get exactly 0.
// (Tq == Tk for a full sequence; Tq == 1 for one new position against a KV cache.)
#pragma once

#include <cstdint>

namespace mg {

void causal_softmax_forward(float* weights, const float* scores, int64_t batch, int64_t Tq, int64_t Tk);

// The backward of w = causal_softmax(scale * s) with respect to s, added (accumulate) or
// written: dscores (+)= scale * w * (dw - sum_k w_k dw_k), row by row, 0 where masked
// (the scale applies both ways).
// Written, dscores may alias dweights (each row reads its dw before writing).
void causal_softmax_backward(float* dscores, const float* dweights, const float* weights, int64_t batch,
                             int64_t Tq, int64_t Tk, float scale, bool accumulate);

}  // namespace mg
