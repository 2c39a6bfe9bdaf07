// oneDNN versions of the LayerNorm forward and the GELU, with the same contracts as the
// plain ones in kernels/{layernorm,gelu}.h, so the two can be swapped and held against
// each other; cpu_dispatch.cpp picks them under the oneDNN backend. Each distinct shape
// gets one primitive, created on first use and cached for the life of the process; the
// GEMM backend (gemm_onednn) shares the same engine, stream and cache accounting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace dnnl {
struct engine;
struct stream;
}  // namespace dnnl

namespace mg {

// x, out [rows,D]; weight, bias [D]; saves mean, rstd = 1/sqrt(var + eps) [rows].
void layernorm_forward_onednn(float* out, float* mean, float* rstd, const float* x, const float* weight,
                              const float* bias, int64_t rows, int64_t D, float eps);

// Exact (erf) GELU over n values; backward: dx (+)= dout * (Phi(x) + x * phi(x)).
void gelu_forward_onednn(float* out, const float* x, int64_t n);
void gelu_backward_onednn(float* dx, const float* dout, const float* x, int64_t n, bool accumulate);

// Primitives created so far by every oneDNN kernel (GEMM and the ops above). Repeated
// calls on one shape must not raise it: the tests use it to prove the caches hit.
size_t onednn_cached_primitive_count();

// Shared by the oneDNN kernels of this layer (gemm_onednn.cpp, onednn_ops.cpp); not for
// callers above the kernels layer.
namespace onednn_detail {
dnnl::engine& engine();   // the process's one CPU engine
dnnl::stream& stream();   // and its one in-order stream
std::mutex& mutex();      // held while a cache is searched or a cached primitive runs
void count_primitive();   // called once for every primitive created
// The OpenMP thread count a primitive created now will run with: oneDNN fixes it when it
// creates the primitive, so it is part of every cache key (one made at 1 thread and
// reused after set_num_threads(2) would run on one core).
int primitive_threads();
}  // namespace onednn_detail

}  // namespace mg
