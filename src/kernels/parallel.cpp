#include "kernels/parallel.h"

#include <omp.h>

namespace mg {

void run_workers(int workers, const std::function<void(int worker, int team)>& body) {
  if (workers <= 1) return body(0, 1);
#pragma omp parallel num_threads(workers)
  body(omp_get_thread_num(), omp_get_num_threads());
}

OneThreadScope::OneThreadScope() : saved_(omp_get_max_threads()) {
  if (saved_ > 1) omp_set_num_threads(1);
}

OneThreadScope::~OneThreadScope() {
  if (saved_ > 1) omp_set_num_threads(saved_);
}

// An orphaned barrier: it binds to the team of run_workers' region (none outside it).
void workers_barrier() {
#pragma omp barrier
}

}  // namespace mg
