// RoPE angle tables. docs/model.md, "RoPE": angles in double, then cos and sin rounded to float32.
#pragma once

#include <cstdint>
#include <vector>

namespace mg {

struct RopeTable {
  int64_t positions = 0;    // rows: positions 0 .. positions-1
  int64_t head_width = 0;   // d (even)
  std::vector<float> cos;   // [positions, d/2]: cos(p * base^(-2i/d))
  std::vector<float> sin;   // [positions, d/2]
  // The same per coordinate, for a rotation in vector lanes: [positions, d], pair i's cos at
  // 2i and 2i+1, its sin negated at 2i, so R x = x * cos_pairs + swap_pairs(x) * sin_pairs
  // with swap_pairs exchanging each pair's two coordinates.
  std::vector<float> cos_pairs;
  std::vector<float> sin_pairs;
};

RopeTable make_rope_table(int64_t positions, int64_t head_width, double base);

// x, out [rows, T, d]: rotates pair i of position (offset + t). out may alias x.
void rope_forward(float* out, const float* x, const RopeTable& table, int64_t rows, int64_t T, int64_t d,
                  int64_t offset);
// Head vectors x, out [rows, d], each rotated at its own position p, turned to position
// p - shift: rotations of one plane add their angles, so R(p - shift) = R(-shift) R(p),
// the same turn for every row (a KV cache moving its keys down by shift positions).
// out may alias x.
void rope_shift(float* out, const float* x, const RopeTable& table, int64_t rows, int64_t d, int64_t shift);
// qkv_heads' re-layout with the rotation folded in, one pass each way:
//   to_heads: in = rows [B,T,3D] (q, k, v side by side, as one GEMM writes them), out =
//             heads [3,B,H,T,d], q and k rotated at positions offset .. offset+T-1;
//   else:     in = heads, out = rows, q and k rotated back by R(-angle) (the backward).
// Without a table (learned positions) a plain re-layout. D = H*d.
void relayout_qkv(float* out, const float* in, const RopeTable* table, int64_t B, int64_t T, int64_t H, int64_t d,
                  int64_t offset, bool to_heads);
// The rotation is orthogonal, so the gradient rotates back by the negative angle:
// dx (+)= R(-angle) dout, added when accumulate, else written.
void rope_backward(float* dx, const float* dout, const RopeTable& table, int64_t rows, int64_t T, int64_t d,
                   int64_t offset, bool accumulate);

}  // namespace mg
