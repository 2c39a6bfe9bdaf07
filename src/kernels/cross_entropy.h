// Cross-entropy from logits with a fused, max-subtracted log-softmax.
#pragma once

#include <cstdint>

#include "kernels/cpu_kernels.h"

namespace mg {

// logits [rows,V], targets [rows] in [0,V). Writes probs [rows,V] = softmax(logits)
// for the backward and returns the mean over rows of -log probs[target], summed in double.
double cross_entropy_forward(float* probs, const float* logits, const int32_t* targets, int64_t rows,
                             int64_t V);

// cross_entropy_backward(dlogits, probs, targets, rows, V, dloss), compiled per CPU variant
// (kernels/cpu_kernels.h's list): dlogits += dloss / rows * (probs - onehot(target)).

}  // namespace mg
