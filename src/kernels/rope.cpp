// Rotary position embedding (docs/model.md, "RoPE"). Pair i of a head vector at position p is
// rotated by angle p * base^(-2i/d); the table holds cos and sin of every angle, computed
// in double and rounded once to float32, so every implementation agrees to the bit.
// The rotation itself is kernels/cpu/rope_rotate.cpp.
#include "kernels/rope.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace mg {

RopeTable make_rope_table(int64_t positions, int64_t head_width, double base) {
  if (head_width % 2 != 0)
    throw ShapeError("RoPE needs an even head width, found d=" + std::to_string(head_width));
  RopeTable table;
  table.positions = positions;
  table.head_width = head_width;
  const int64_t half = head_width / 2;
  table.cos.resize(positions * half);
  table.sin.resize(positions * half);
  table.cos_pairs.resize(positions * head_width);
  table.sin_pairs.resize(positions * head_width);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(p) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_width));
      table.cos[p * half + i] = static_cast<float>(std::cos(angle));
      table.sin[p * half + i] = static_cast<float>(std::sin(angle));
      float* c = table.cos_pairs.data() + p * head_width + 2 * i;
      float* s = table.sin_pairs.data() + p * head_width + 2 * i;
      c[0] = c[1] = table.cos[p * half + i];
      s[0] = -table.sin[p * half + i];
      s[1] = table.sin[p * half + i];
    }
  }
  return table;
}

}  // namespace mg
