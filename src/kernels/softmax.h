// Causal softmax over the last axis of scores [batch, Tq, Tk]. Query row i sits at
// absolute position Tk - Tq + i, and sees keys s <= Tk - Tq + i; the rest get exactly 0.
// (Tq == Tk for a full sequence; Tq == 1 for one new position against a KV cache; Tq > Tk
// is the caller's error to refuse.)
//   causal_softmax_forward(weights, scores, batch, Tq, Tk)
//   causal_softmax_backward(dscores, dweights, weights, batch, Tq, Tk, scale, accumulate)
// The backward is that of w = causal_softmax(scale * s) with respect to s, added
// (accumulate) or written: dscores (+)= scale * w * (dw - sum_k w_k dw_k), row by row, 0
// where masked (the scale applies both ways). Written, dscores may alias dweights (each row
// reads its dw before writing). Both are compiled per CPU variant and declared in
// kernels/cpu_kernels.h's list.
#pragma once

#include "kernels/cpu_kernels.h"
