// SPDX-License-Identifier: Apache-2.0
// Process-wide worker threads for the interpreter's kernels. Work is cut into chunks whose
// boundaries depend only on the problem and the caller's chunk size, never on the number of
// threads, and each chunk is computed the same way whichever thread runs it: so every result is
// bit-identical for every --threads value. The mains set the thread count once; library code
// only calls ParallelFor.
#pragma once

#include <cstdint>
#include <functional>

namespace nhlo {

/// Sets the number of threads ParallelFor uses (1 runs everything on the caller's thread).
/// 0 means every core the process may use. Not to be called while a ParallelFor runs. Returns
/// the count it got: fewer than asked when the system refuses a thread (a process limit).
int SetParallelThreads(int threads);
/// The count SetParallelThreads settled on (1 before it is called).
int ParallelThreads();
/// The number of cores this process may run on (sched_getaffinity, else hardware_concurrency).
int AvailableCores();

/// Runs body(begin, end) over [0, count) cut into chunks of `chunk` items (the last may be
/// shorter), spread over the worker threads and the caller; returns when every chunk is done.
/// Chunks run in no particular order and concurrently, so a body writes only its own chunk's
/// results. With one thread, or a single chunk, the body runs inline on the caller.
void ParallelFor(int64_t count, int64_t chunk, const std::function<void(int64_t begin, int64_t end)>& body);

/// A chunk size that gives each chunk at least `min_work` units when each item costs
/// `work_per_item` units. Depends only on its arguments, so it keeps results thread-independent.
inline int64_t ChunkFor(int64_t work_per_item, int64_t min_work = 1 << 16) {
  if (work_per_item < 1) work_per_item = 1;
  int64_t items = min_work / work_per_item;
  return items < 1 ? 1 : items;
}

}  // namespace nhlo
