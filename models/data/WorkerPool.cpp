// The worker pool: one mutex hands out iterations; the caller waits until the loop drains.
#include "models/data/WorkerPool.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

// The workers' nice value: a thread at nice 0 then gets about ten times their share of a core.
constexpr int kNice = 10;

}  // namespace

WorkerPool::WorkerPool(std::size_t workers) {
  VDNN_EXPECTS(workers >= 1, "a worker pool needs at least one thread");
  threads_.reserve(workers);
  try {
    for (std::size_t w = 0; w < workers; ++w) threads_.emplace_back([this, w] { work(w); });
  } catch (...) {
    stop_and_join();  // a joinable std::thread must not be destroyed
    throw;
  }
}

WorkerPool::~WorkerPool() { stop_and_join(); }

void WorkerPool::stop_and_join() noexcept {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::run(std::int64_t count, const Body& body) {
  if (count <= 0) return;
  std::unique_lock<std::mutex> lock(mutex_);
  body_ = &body;
  count_ = count;
  next_ = 0;
  running_ = 0;
  failed_at_ = -1;
  error_ = nullptr;
  work_ready_.notify_all();
  work_done_.wait(lock, [this] { return next_ == count_ && running_ == 0; });
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void WorkerPool::work(std::size_t worker) noexcept {
  // Note [Image pipeline]: below the thread that enqueues the training step, which must never wait
  // for a core behind a decode (Linux applies a thread's nice value to that thread alone).
  static_cast<void>(setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kNice));
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [this] { return stop_ || (body_ != nullptr && next_ < count_); });
    if (stop_) return;
    const std::int64_t i = next_++;
    ++running_;
    const Body& body = *body_;
    lock.unlock();
    std::exception_ptr error;
    try {
      body(worker, i);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --running_;
    if (error && (failed_at_ < 0 || i < failed_at_)) {
      failed_at_ = i;
      error_ = error;
    }
    if (error) next_ = count_;  // skip the rest
    if (next_ == count_ && running_ == 0) work_done_.notify_all();
  }
}

}  // namespace vdnn::models
