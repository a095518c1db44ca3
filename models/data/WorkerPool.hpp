// WorkerPool: a fixed set of threads that run the iterations of one loop at a time, for the
// image pipeline's decode and resize (Note [Image pipeline]).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vdnn::models {

/// Runs `body(worker, i)` for i in [0, count) on `workers` threads (worker in [0, workers): each
/// worker's own scratch), iterations taken in order as threads come free. One loop at a time:
/// run() is called from one thread (the dataset's). Threads start at construction, at a lower
/// priority than the process's other threads (nice 10), and are joined at destruction.
class WorkerPool {
 public:
  using Body = std::function<void(std::size_t worker, std::int64_t i)>;

  /// `workers` >= 1 threads. Throws std::system_error when a thread cannot start.
  explicit WorkerPool(std::size_t workers);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  WorkerPool(WorkerPool&&) = delete;
  WorkerPool& operator=(WorkerPool&&) = delete;
  /// Joins the threads; never throws.
  ~WorkerPool();

  std::size_t workers() const noexcept { return threads_.size(); }
  /// Runs the loop and returns when every iteration is done. When iterations throw, the rest are
  /// skipped and the exception of the lowest-numbered failing iteration among those that ran is
  /// rethrown.
  void run(std::int64_t count, const Body& body);

 private:
  void work(std::size_t worker) noexcept;
  void stop_and_join() noexcept;

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const Body* body_ = nullptr;  // the loop running, if any
  std::int64_t count_ = 0;
  std::int64_t next_ = 0;     // the next iteration to hand out
  std::int64_t running_ = 0;  // iterations handed out and not finished
  std::int64_t failed_at_ = -1;
  std::exception_ptr error_;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: started after everything they use exists
};

}  // namespace vdnn::models
