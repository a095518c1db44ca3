// IssueThread: a host thread of its own that makes the CUDA calls of the copy streams, so the
// thread that enqueues the step's kernels does not pay for them (Note [Issue thread]).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vdnn::runtime::cuda {

/// What post() hands over: a call to make on the issue thread, and counters that post() increments
/// and the issue thread decrements once the call is made, thrown or not (each an event's count of
/// posted calls not yet made; null entries are skipped).
struct PostedCall {
  std::function<void()> call;
  std::array<std::atomic<int>*, 6> unissued{};
};

/// Makes posted calls one at a time, in the order they were posted, on a host thread whose current
/// device is `ordinal`. Calls posted from one thread keep that thread's order; the calls the
/// poster makes itself are ordered against them only through drain() or the counters of
/// PostedCall. The first exception a call throws is kept and rethrown by the next drain(); later
/// calls are still made. post() and drain() may be called from any one thread at a time besides
/// the issue thread. The destructor makes every posted call, then joins the thread; it never
/// throws (an error still kept is lost).
class IssueThread {
 public:
  /// Throws std::system_error when the thread cannot start; an error making `ordinal` current
  /// there is kept for the first drain().
  explicit IssueThread(int ordinal);
  IssueThread(const IssueThread&) = delete;
  IssueThread& operator=(const IssueThread&) = delete;
  IssueThread(IssueThread&&) = delete;
  IssueThread& operator=(IssueThread&&) = delete;
  ~IssueThread();

  /// Queues `posted`; never blocks on the calls before it.
  void post(PostedCall posted);
  /// Blocks until every call posted so far has been made, then rethrows the first exception one of
  /// them threw since the last drain().
  void drain();

 private:
  void run();
  bool wait_for_work(std::unique_lock<std::mutex>& lock);
  void make(PostedCall& posted) noexcept;

  std::mutex mutex_;
  std::condition_variable work_;               // the issue thread sleeps on it when idle
  std::condition_variable drained_;            // drain() sleeps on it
  std::vector<PostedCall> queue_;              // guarded by mutex_
  std::uint64_t posted_ = 0;                   // guarded by mutex_
  std::uint64_t made_ = 0;                     // guarded by mutex_
  bool sleeping_ = false;                      // guarded by mutex_
  bool stopping_ = false;                      // guarded by mutex_
  std::exception_ptr error_;                   // guarded by mutex_
  std::atomic<std::uint64_t> posted_hint_{0};  // posted_, read without the lock while spinning
  std::thread thread_;                         // last: starts once the members above exist
};

/// Blocks the calling thread until `unissued` (a PostedCall counter) is zero: every call posted
/// with it has been made. Spins, yielding: the issue thread runs ahead of its poster, so the wait
/// is short when it happens at all.
void settle(const std::atomic<int>& unissued) noexcept;

}  // namespace vdnn::runtime::cuda
