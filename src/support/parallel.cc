// SPDX-License-Identifier: Apache-2.0
// A fixed set of worker threads that wait on a condition variable for a job, then claim chunks
// from a shared atomic counter until none is left. The caller claims chunks too, so one thread
// means no worker at all. One job runs at a time: a ParallelFor called from inside a body, or
// while another thread's job holds the pool (the simulated devices of a multi-device run each
// have a thread), runs inline instead of waiting. Chunking does not depend on who runs a
// chunk, so neither changes a result.
#include "support/parallel.h"

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace nhlo {
namespace {

struct Job {
  int64_t count = 0, chunk = 1, chunks = 0;
  const std::function<void(int64_t, int64_t)>* body = nullptr;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
};

class Pool {
 public:
  ~Pool() { Resize(1); }

  void Resize(int threads) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stopping_ = false;
    threads_ = threads < 1 ? 1 : threads;
    // A process or address-space limit can refuse a thread: the pool then runs on those it got
    // (SetParallelThreads returns how many; the programs warn).
    // Starting a thread can also fail for want of memory (its state object), not only a stack.
    for (int i = 1; i < threads_; ++i) {
      try {
        workers_.emplace_back([this] { WorkerLoop(); });
      } catch (const std::system_error&) {
        threads_ = i;
        break;
      } catch (const std::bad_alloc&) {
        threads_ = i;
        break;
      }
    }
  }

  int threads() const { return threads_; }

  // False, with nothing run, when another thread's job holds the pool.
  bool TryRun(int64_t count, int64_t chunk, const std::function<void(int64_t, int64_t)>& body) {
    std::unique_lock<std::mutex> owner(run_mutex_, std::try_to_lock);
    if (!owner.owns_lock()) return false;
    Job job;
    job.count = count;
    job.chunk = chunk;
    job.chunks = (count + chunk - 1) / chunk;
    job.body = &body;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    inside_job = true;
    Work(job);
    inside_job = false;
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return job.done.load() == job.chunks && busy_workers_ == 0; });
    job_ = nullptr;
    return true;
  }

  static thread_local bool inside_job;

 private:
  static void Work(Job& job) {
    for (;;) {
      int64_t c = job.next.fetch_add(1);
      if (c >= job.chunks) return;
      int64_t begin = c * job.chunk;
      int64_t end = begin + job.chunk < job.count ? begin + job.chunk : job.count;
      (*job.body)(begin, end);
      job.done.fetch_add(1);
    }
  }

  void WorkerLoop() {
    inside_job = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || (job_ && generation_ != seen); });
      if (stopping_) return;
      seen = generation_;
      Job* job = job_;
      ++busy_workers_;
      lock.unlock();
      Work(*job);
      lock.lock();
      --busy_workers_;
      finished_.notify_all();
    }
  }

  std::mutex run_mutex_;  // held by the thread whose job the pool runs
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> workers_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  int busy_workers_ = 0;
  int threads_ = 1;
  bool stopping_ = false;
};

thread_local bool Pool::inside_job = false;

Pool& ThePool() {
  static Pool pool;
  return pool;
}

}  // namespace

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int SetParallelThreads(int threads) {
  ThePool().Resize(threads <= 0 ? AvailableCores() : threads);
  return ThePool().threads();
}

int ParallelThreads() { return ThePool().threads(); }

void ParallelFor(int64_t count, int64_t chunk, const std::function<void(int64_t begin, int64_t end)>& body) {
  if (count <= 0) return;
  if (chunk < 1) chunk = 1;
  Pool& pool = ThePool();
  if (pool.threads() > 1 && count > chunk && !Pool::inside_job && pool.TryRun(count, chunk, body)) return;
  for (int64_t begin = 0; begin < count; begin += chunk) body(begin, begin + chunk < count ? begin + chunk : count);
}

}  // namespace nhlo
