// The copy streams' issue thread: a queue of posted CUDA calls made in order on a thread of its
// own.
#include "runtime/cuda/IssueThread.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <utility>

#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

// How long the idle issue thread spins before it sleeps. Posts come every few microseconds inside
// a step; waking a sleeping thread costs the poster a system call each time.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(200);

}  // namespace

IssueThread::IssueThread(int ordinal) : thread_([this] { run(); }) {
  post({[ordinal] { VDNN_CHECK_CUDA(cudaSetDevice(ordinal)); }});
}

IssueThread::~IssueThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void IssueThread::post(PostedCall posted) {
  for (std::atomic<int>* unissued : posted.unissued) {
    if (unissued != nullptr) unissued->fetch_add(1, std::memory_order_relaxed);
  }
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(posted));
    posted_hint_.store(++posted_, std::memory_order_release);
    wake = sleeping_;
  }
  if (wake) work_.notify_one();
}

void IssueThread::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [this] { return made_ == posted_; });
  if (error_ != nullptr) std::rethrow_exception(std::exchange(error_, nullptr));
}

// Returns false when the thread should stop: stopping and nothing left to make.
bool IssueThread::wait_for_work(std::unique_lock<std::mutex>& lock) {
  if (!queue_.empty()) return true;
  const std::uint64_t seen = posted_;
  lock.unlock();
  const auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  while (posted_hint_.load(std::memory_order_acquire) == seen &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  lock.lock();
  sleeping_ = true;
  work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  sleeping_ = false;
  return !queue_.empty();
}

void IssueThread::make(PostedCall& posted) noexcept {
  try {
    posted.call();
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_ == nullptr) error_ = std::current_exception();
  }
  for (std::atomic<int>* unissued : posted.unissued) {
    if (unissued != nullptr) unissued->fetch_sub(1, std::memory_order_release);
  }
}

void IssueThread::run() {
  std::vector<PostedCall> batch;
  std::unique_lock<std::mutex> lock(mutex_);
  while (wait_for_work(lock)) {
    batch.swap(queue_);
    lock.unlock();
    for (PostedCall& posted : batch) make(posted);
    const std::uint64_t made = batch.size();
    batch.clear();
    lock.lock();
    made_ += made;
    if (made_ == posted_) drained_.notify_all();
  }
}

void settle(const std::atomic<int>& unissued) noexcept {
  while (unissued.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

}  // namespace vdnn::runtime::cuda
