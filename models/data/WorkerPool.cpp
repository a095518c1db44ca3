// The worker pool: one mutex hands out iterations of the queued loops; wait() sleeps until its
// loop drains.
#include "models/data/WorkerPool.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

// Where SCHED_IDLE is refused: a thread at nice 0 then gets about seventy times their share.
constexpr int kFallbackNice = 19;

// Note [Image pipeline]: below every other thread of the machine, so that the thread enqueueing
// the training step never waits for a core behind a decode. Linux applies a scheduling policy
// (and a nice value) to the calling thread alone.
void lower_this_thread() noexcept {
  const sched_param idle{};
  if (sched_setscheduler(0, SCHED_IDLE, &idle) != 0) {
    static_cast<void>(
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kFallbackNice));
  }
}

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

WorkerPool::Ticket WorkerPool::submit(std::int64_t count, Body body) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Loop& loop = loops_.emplace_back();
  loop.ticket = next_ticket_++;
  loop.body = std::move(body);
  loop.count = std::max<std::int64_t>(count, 0);
  work_ready_.notify_all();
  return loop.ticket;
}

void WorkerPool::wait(Ticket ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto loop = std::find_if(loops_.begin(), loops_.end(),
                                 [ticket](const Loop& l) { return l.ticket == ticket; });
  VDNN_EXPECTS(loop != loops_.end(), "a worker pool waits once for each loop it was given");
  work_done_.wait(lock, [&] { return loop->done(); });
  std::exception_ptr error = std::move(loop->error);
  loops_.erase(loop);
  lock.unlock();
  if (error) std::rethrow_exception(error);
}

WorkerPool::Loop* WorkerPool::open_loop() noexcept {
  for (Loop& loop : loops_) {
    if (loop.next < loop.count) return &loop;
  }
  return nullptr;
}

void WorkerPool::work(std::size_t worker) noexcept {
  lower_this_thread();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    Loop* loop = nullptr;
    work_ready_.wait(lock, [&] { return stop_ || (loop = open_loop()) != nullptr; });
    if (stop_) return;
    const std::int64_t i = loop->next++;
    ++loop->running;
    const Body& body = loop->body;  // the loop stays in loops_ until its waiter erases it
    lock.unlock();
    std::exception_ptr error;
    try {
      body(worker, i);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --loop->running;
    if (error && (loop->failed_at < 0 || i < loop->failed_at)) {
      loop->failed_at = i;
      loop->error = error;
    }
    if (error) loop->next = loop->count;  // skip the rest
    if (loop->done()) work_done_.notify_all();
  }
}

}  // namespace vdnn::models
