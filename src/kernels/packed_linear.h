// A linear layer packed for inference: y = x W^T + b, W [out,in] as PyTorch stores it.
// Generation feeds one position per step, so its products are matrix-vector products, too
// small for a GEMM library (call and packing overhead) and bound by streaming the weights;
// a prompt or a rebuilt window feeds up to block_size rows, a small GEMM. W is repacked
// once into panels of up to 64 outputs, each panel [in, width] contiguous: a block of rows
// walks a panel front to back with its sums held in vector registers, so each panel row
// loaded serves the whole block. The panel kernel is compiled per CPU variant
// (kernels/cpu/matvec.cpp); it never enters an OpenMP region (tiny products run on the
// calling thread).
#pragma once

#include <cstdint>
#include <vector>

namespace mg {

class PackedLinear {
 public:
  PackedLinear() = default;
  // weight [out,in] row-major; bias [out], or null for a bias-free layer. Copies both.
  PackedLinear(const float* weight, const float* bias, int64_t out, int64_t in);

  int64_t out() const { return out_; }
  int64_t in() const { return in_; }

  // y[rows, ldy] = x[rows, ldx] W^T + b, or += with accumulate (the residual stream).
  // Writes only columns 0..out-1 of y and reads only columns 0..in-1 of x.
  void forward(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, bool accumulate) const;

 private:
  int64_t out_ = 0, in_ = 0;
  std::vector<float> panels_;  // panel p: [in, width_p], width_p = min(64, out - 64p) rounded up to 8, zero-padded
  std::vector<float> bias_;    // [out rounded up to 8], zero-padded (zero when bias-free)
};

// y[rows, ldy] = x[rows, ldx] A, A [in, width] with rows lda apart: the same kernel on an
// unpacked matrix, for attention (scores = Q K^T with the keys stored transposed, then
// W V). Reads each row of A up to width rounded up to 8 (64 at most per block of 64
// columns): A must have that much readable memory after its last row's width; those
// values only reach outputs that are never written.
void matrix_product(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* a, int64_t lda,
                    int64_t in, int64_t width);

}  // namespace mg
