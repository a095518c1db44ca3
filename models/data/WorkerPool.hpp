// WorkerPool: a fixed set of threads that run the iterations of queued loops, for the image
// pipeline's decode and resize (Note [Image pipeline]).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace vdnn::models {

/// Runs `body(worker, i)` for i in [0, count) on `workers` threads (worker in [0, workers): each
/// worker's own scratch), iterations taken in order as threads come free. Loops queue: a thread
/// takes from the oldest loop with iterations left, so the next loop's iterations start while
/// the last ones of the loop before it finish (no thread waits at a loop's end while another
/// loop is queued). submit(), wait() and run() are called from one thread (the dataset's).
/// Threads start at construction, below every other thread of the machine (SCHED_IDLE: they
/// run on cores nothing else wants; nice 19 where that policy is refused), and are joined at
/// destruction after the iterations they started.
class WorkerPool {
 public:
  using Body = std::function<void(std::size_t worker, std::int64_t i)>;
  /// Names a submitted loop until wait() returns for it.
  using Ticket = std::uint64_t;

  /// `workers` >= 1 threads. Throws std::system_error when a thread cannot start.
  explicit WorkerPool(std::size_t workers);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  WorkerPool(WorkerPool&&) = delete;
  WorkerPool& operator=(WorkerPool&&) = delete;
  /// Skips the iterations no thread has started and joins the threads; never throws.
  ~WorkerPool();

  std::size_t workers() const noexcept { return threads_.size(); }
  /// Queues a loop of `count` >= 0 iterations and returns at once; what `body` uses must live
  /// until wait() returns for it.
  Ticket submit(std::int64_t count, Body body);
  /// Returns when every iteration of the loop is done. When iterations throw, the loop's other
  /// iterations are skipped and the exception of the lowest-numbered failing iteration among
  /// those that ran is rethrown. Each ticket is waited for once.
  void wait(Ticket ticket);
  /// submit() then wait().
  void run(std::int64_t count, Body body) { wait(submit(count, std::move(body))); }

 private:
  struct Loop {
    Ticket ticket = 0;
    Body body;
    std::int64_t count = 0;
    std::int64_t next = 0;     // the next iteration to hand out
    std::int64_t running = 0;  // iterations handed out and not finished
    std::int64_t failed_at = -1;
    std::exception_ptr error;
    bool done() const noexcept { return next == count && running == 0; }
  };

  void work(std::size_t worker) noexcept;
  // The oldest loop with an iteration to hand out, or null. Under mutex_.
  Loop* open_loop() noexcept;
  void stop_and_join() noexcept;

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::list<Loop> loops_;  // submitted and not yet waited for, oldest first (stable addresses)
  Ticket next_ticket_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: started after everything they use exists
};

}  // namespace vdnn::models
