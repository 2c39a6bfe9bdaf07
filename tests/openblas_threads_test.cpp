// gemm_openblas runs OpenBLAS on one thread per tile of gemm_split: inside our pool's region,
// or on the calling thread with one OpenMP thread allowed, so that OpenBLAS opens no region
// of its own. One nested in ours, even in a team of one (a region whose `if` clause is
// false), made libgomp start a new thread for it on every call: --backend openblas once ran
// at a fifth of its speed at 2 threads. The threads a call starts are counted by wrapping
// pthread_create: the test executable's definition comes first in the dynamic linker's
// lookup, so libgomp's and OpenBLAS's calls reach it.
#include <dlfcn.h>
#include <pthread.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/runtime.h"

namespace {
std::atomic<int> g_threads_started{0};
}

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Create real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  g_threads_started.fetch_add(1);
  return real(thread, attr, start, arg);
}

namespace mg {
namespace {

struct Product {
  std::vector<float> a, b, c;
  GemmArgs args;
  Product(int64_t batch, int64_t n) : a(batch * n * n, 0.5f), b(batch * n * n, 0.25f), c(batch * n * n) {
    args = tight_gemm_args({}, n, n, n, batch);
    args.A = a.data();
    args.B = b.data();
    args.C = c.data();
  }
};

// How many threads `calls` runs of the product start, after one run to start the pools.
int threads_started_by(const GemmArgs& args, int calls) {
  gemm_openblas(args);
  const int before = g_threads_started.load();
  for (int i = 0; i < calls; ++i) gemm_openblas(args);
  return g_threads_started.load() - before;
}

TEST(OpenBlasThreadsTest, TheCounterSeesAThreadStart) {
  const int before = g_threads_started.load();
  std::thread([] {}).join();
  EXPECT_EQ(g_threads_started.load() - before, 1) << "pthread_create is not the wrapped one: the tests below prove nothing";
}

TEST(OpenBlasThreadsTest, ALargeProductStartsNoThreadPerCall) {
  set_num_threads(2);
  Product big(1, 384);  // two tiles of rows, one on each of the pool's threads
  EXPECT_EQ(threads_started_by(big.args, 10), 0);
  EXPECT_FLOAT_EQ(big.c[0], 384 * 0.5f * 0.25f);
}

TEST(OpenBlasThreadsTest, ABatchOfSmallProductsOnThePoolStartsNoThreadPerCall) {
  set_num_threads(2);
  Product heads(64, 32);  // one entry per pool thread at a time
  EXPECT_EQ(threads_started_by(heads.args, 10), 0);
  EXPECT_FLOAT_EQ(heads.c.back(), 32 * 0.5f * 0.25f);
}

}  // namespace
}  // namespace mg
