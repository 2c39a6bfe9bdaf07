// Cross-entropy from logits with a fused, max-subtracted log-softmax.
#pragma once

#include <cstdint>

namespace mg {

// logits [rows,V], targets [rows] in [0,V). Writes probs [rows,V] = softmax(logits)
// for the backward and returns the mean over rows of -log probs[target], summed in double.
double cross_entropy_forward(float* probs, const float* logits, const int32_t* targets, int64_t rows,
                             int64_t V);

// dlogits += dloss / rows * (probs - onehot(target)).
void cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets, int64_t rows,
                            int64_t V, float dloss);

}  // namespace mg
