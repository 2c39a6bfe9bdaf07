// The op-family profile: off, it records nothing; on, the GEMM FLOPs are the exact sum of
// 2*M*N*K over the products run, each kernel's entry point charges its own family, nested
// scopes are charged exclusively (the families add up to the total), a scope inside a
// parallel region records nothing, and a pause stops the clock.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "autograd/ops.h"
#include "kernels/profile.h"
#include "kernels/runtime.h"
#include "core/random.h"

namespace mg {
namespace {

Var random_param(Shape shape, uint64_t seed) {
  Rng rng(seed);
  Tensor t = Tensor::empty(std::move(shape));
  for (float& v : t.span()) v = static_cast<float>(rng.normal());
  return Var(t, true);
}

const ProfileReport::Family& family(const ProfileReport& r, OpFamily f) { return r.families[static_cast<int>(f)]; }

// x [6,5] -> linear [4,5] -> gelu -> cross-entropy, forward and backward: three GEMMs of
// 2*6*4*5 FLOPs each (forward, dx, dW).
void run_small_step() {
  Var x = random_param({6, 5}, 1), w = random_param({4, 5}, 2);
  Var loss = cross_entropy(gelu(linear(x, w)), std::vector<int32_t>{0, 1, 2, 3, 0, 1});
  backward(loss);
}

TEST(ProfileTest, OffRecordsNothing) {
  set_profiling(false);
  run_small_step();
  const ProfileReport r = profile_snapshot();
  EXPECT_EQ(r.gemm_flops, 0.0);
  for (const auto& f : r.families) EXPECT_EQ(f.calls, 0);
}

TEST(ProfileTest, CountsExactGemmFlopsAndChargesEachFamilyExclusively) {
  const GemmBackend previous = gemm_backend();
  set_gemm_backend(GemmBackend::reference);
  set_profiling(true);
  run_small_step();
  profile_count_step();
  const ProfileReport r = profile_snapshot();
  set_profiling(false);
  set_gemm_backend(previous);

  EXPECT_EQ(r.gemm_flops, 3 * 2.0 * 6 * 4 * 5);
  EXPECT_EQ(r.steps, 1);
  EXPECT_EQ(family(r, OpFamily::gemm).calls, 3);
  EXPECT_EQ(family(r, OpFamily::gelu).calls, 2);  // forward and backward
  EXPECT_EQ(family(r, OpFamily::loss).calls, 2);
  EXPECT_EQ(family(r, OpFamily::layernorm).calls, 0);
  EXPECT_GT(family(r, OpFamily::gemm).seconds, 0.0);
}

// "Exclusive": a scope nested in another pauses its parent. Inclusive charging would give
// the outer family the whole outer wall time (>= 60 ms here); exclusive gives it that time
// minus the inner scope's (>= 40 ms less). Sleeps only ever run long on a busy machine,
// and every bound below holds however long they run.
TEST(ProfileTest, ANestedScopePausesItsParent) {
  using Clock = std::chrono::steady_clock;
  set_profiling(true);
  const auto start = Clock::now();
  {
    ProfileScope outer(OpFamily::attention);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    {
      ProfileScope inner(OpFamily::softmax);
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const ProfileReport r = profile_snapshot();
  set_profiling(false);
  const double outer = family(r, OpFamily::attention).seconds, inner = family(r, OpFamily::softmax).seconds;
  EXPECT_GE(inner, 0.040);
  EXPECT_GE(outer, 0.020);
  EXPECT_LE(outer + inner, wall + 1e-6);  // inclusive charging would count the 40 ms twice
  EXPECT_LE(outer, wall - 0.040 + 1e-6);
  EXPECT_EQ(family(r, OpFamily::attention).calls, 1);
  EXPECT_EQ(family(r, OpFamily::softmax).calls, 1);
}

// adamw_update_all runs the per-tensor kernels on OpenMP's threads: their entry points'
// scopes must neither race on the profile nor count, however many threads the region has.
TEST(ProfileTest, AScopeInsideAParallelRegionRecordsNothing) {
  set_profiling(true);
  for (int threads : {1, 2}) {
#pragma omp parallel num_threads(threads)
    { ProfileScope scope(OpFamily::optimizer); }
  }
  const ProfileReport r = profile_snapshot();
  set_profiling(false);
  EXPECT_EQ(family(r, OpFamily::optimizer).calls, 0);
}

TEST(ProfileTest, PausedScopesAndClearedRecordsAreNotCounted) {
  set_profiling(true);
  profile_pause();
  run_small_step();  // while paused
  ProfileReport r = profile_snapshot();
  EXPECT_EQ(r.gemm_flops, 0.0);
  EXPECT_EQ(family(r, OpFamily::gemm).calls, 0);
  profile_resume();
  run_small_step();
  profile_clear();  // forgets the step above
  r = profile_snapshot();
  EXPECT_EQ(r.gemm_flops, 0.0);
  EXPECT_EQ(family(r, OpFamily::gelu).calls, 0);
  set_profiling(false);
}

}  // namespace
}  // namespace mg
