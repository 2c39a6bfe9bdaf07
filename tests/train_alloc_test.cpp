// The steady-state training step allocates no buffers: after the first steps have filled
// the tensor storage pool, every tensor of a step is served from it (no pool miss), and
// nothing else asks the allocator for a buffer-sized block either. Counted on steps 3..5
// of a tiny training run, through the training job itself.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "config_support.h"
#include "test_support.h"
#include "train/train.h"

namespace {

// operator new calls of at least kLargeBytes while counting is on. Smaller blocks are the
// graph's bookkeeping (nodes, closures, shape vectors), not data buffers.
constexpr size_t kLargeBytes = 4096;
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_large_news{0};
std::atomic<int64_t> g_all_news{0};

}  // namespace

void* operator new(size_t bytes) {
  if (g_counting.load(std::memory_order_relaxed)) {
    ++g_all_news;
    if (bytes >= kLargeBytes) ++g_large_news;
  }
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace mg {
namespace {

TEST(TrainAllocationTest, StepsThreeToFiveMissNoPoolBufferAndMakeNoLargeAllocation) {
  const auto dir = test::fresh_dir("alloc");
  Config config = test::tiny_config(dir);
  config.data.probe_path.clear();
  config.train.max_steps = 6;  // step 6 evaluates and checkpoints: outside the window
  config.train.eval_interval = 1000;
  config.train.checkpoint_interval = 1000;
  config.train.threads = 2;
  config.train.batch_size = 64;  // 64 x 16 ids: a copy of them would be a 4 kB allocation

  TensorPoolStats after_step2;
  int64_t misses_in_window = -1;
  TrainRequest request;
  request.config = config;
  request.on_progress = [&](const TrainProgress& p) {
    if (p.step == 2) {
      after_step2 = tensor_pool_stats();
      g_large_news = 0;
      g_all_news = 0;
      g_counting = true;
    } else if (p.step == 5) {
      g_counting = false;
      misses_in_window = tensor_pool_stats().misses - after_step2.misses;
    }
  };
  const TrainResult result = train(request);
  g_counting = false;

  ASSERT_EQ(result.step, 6);
  ASSERT_GT(after_step2.hits, 0) << "the steps never used the pool";
  EXPECT_EQ(misses_in_window, 0) << "tensors of steps 3..5 went to the allocator";
  EXPECT_EQ(g_large_news.load(), 0) << "allocations of >= " << kLargeBytes << " bytes outside the pool in steps 3..5";
  ::testing::Test::RecordProperty("small_operator_new_calls_steps_3_to_5", std::to_string(g_all_news.load()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mg
