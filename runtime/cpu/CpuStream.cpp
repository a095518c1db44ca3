// CpuStream: the worker loop that runs a stream's queue in order, its error policy and stress
// delays (Note [CPU stream emulation]).
#include "runtime/cpu/CpuStream.hpp"

#include <cstdio>
#include <cstring>
#include <utility>

#include "runtime/Error.hpp"
#include "runtime/Random.hpp"
#include "runtime/cpu/CpuEvent.hpp"

namespace vdnn::runtime::cpu {
namespace {

// FNV-1a rather than std::hash, whose values differ between standard libraries: a seed must give
// the same delays everywhere.
std::uint64_t fnv1a(const std::string& text) noexcept {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

void log_unreported(const std::string& stream_name, const std::exception_ptr& error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vdnn: stream '%s' destroyed with an unreported error: %s\n",
                 stream_name.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "vdnn: stream '%s' destroyed with an unreported non-standard exception\n",
                 stream_name.c_str());
  }
}

}  // namespace

CpuStream::CpuStream(std::string name, StressOptions stress)
    : name_(std::move(name)), stress_(stress), name_hash_(fnv1a(name_)) {
  VDNN_EXPECTS(stress_.max_delay.count() >= 0,
               "stream '" + name_ + "': stress max_delay must not be negative");
  worker_ = std::thread([this] { run_worker(); });
}

CpuStream::~CpuStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_one();
  worker_.join();
  if (error_ != nullptr) log_unreported(name_, error_);
}

void CpuStream::enqueue(std::function<void()> task) {
  VDNN_EXPECTS(task != nullptr, "stream '" + name_ + "': enqueue needs a callable task");
  Op op;
  op.kind = OpKind::kTask;
  op.task = std::move(task);
  push(std::move(op));
}

void CpuStream::copy_async(void* dst, const void* src, std::size_t bytes) {
  VDNN_EXPECTS(bytes == 0 || (dst != nullptr && src != nullptr),
               "stream '" + name_ + "': copy_async of " + std::to_string(bytes) +
                   " bytes needs non-null pointers");
  Op op;
  op.kind = OpKind::kCopy;
  op.dst = dst;
  op.src = src;
  op.bytes = bytes;
  push(std::move(op));
}

void CpuStream::wait(const Event& event) {
  const auto* cpu_event = dynamic_cast<const CpuEvent*>(&event);
  VDNN_EXPECTS(cpu_event != nullptr, "stream '" + name_ + "' can only wait on a CpuEvent");
  std::shared_ptr<detail::EventRecord> record = cpu_event->latest();
  if (record == nullptr) return;
  Op op;
  op.kind = OpKind::kWait;
  op.record = std::move(record);
  push(std::move(op));
}

void CpuStream::synchronize() {
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t target = enqueued_;
    done_cv_.wait(lock, [&] { return completed_ >= target; });
    std::swap(error, error_);
  }
  if (error != nullptr) std::rethrow_exception(error);
}

CpuStreamStats CpuStream::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CpuStream::enqueue_record(std::shared_ptr<detail::EventRecord> record) {
  Op op;
  op.kind = OpKind::kRecord;
  op.record = std::move(record);
  push(std::move(op));
}

void CpuStream::push(Op op) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(op));
    ++enqueued_;
  }
  work_cv_.notify_one();
}

void CpuStream::run_worker() noexcept {
  for (std::uint64_t op_index = 0;; ++op_index) {
    CpuStreamStats done;
    std::exception_ptr error;
    {
      Op op;
      bool skip = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and everything enqueued has run
        op = std::move(queue_.front());
        queue_.pop_front();
        skip = error_ != nullptr;
      }
      if (stress_.enabled) std::this_thread::sleep_for(stress_delay(op_index));
      error = run_op(op, skip, done);
    }  // destroys the task and its captures before synchronize() can see it complete
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error_ == nullptr) error_ = std::move(error);
      stats_.tasks += done.tasks;
      stats_.copies += done.copies;
      stats_.bytes_copied += done.bytes_copied;
      stats_.busy += done.busy;
      ++completed_;
    }
    done_cv_.notify_all();
  }
}

std::exception_ptr CpuStream::run_op(const Op& op, bool skip, CpuStreamStats& done) const {
  using Clock = std::chrono::steady_clock;
  switch (op.kind) {
    case OpKind::kTask: {
      if (skip) return nullptr;
      const Clock::time_point start = Clock::now();
      std::exception_ptr error;
      try {
        op.task();
      } catch (...) {
        error = std::current_exception();
      }
      done.busy = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
      done.tasks = 1;
      return error;
    }
    case OpKind::kCopy: {
      if (skip) return nullptr;
      const Clock::time_point start = Clock::now();
      if (op.bytes > 0) std::memcpy(op.dst, op.src, op.bytes);
      done.busy = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
      done.copies = 1;
      done.bytes_copied = op.bytes;
      return nullptr;
    }
    case OpKind::kWait: {
      // A failed stream skips everything up to synchronize(), so there is nothing to hold back.
      if (skip) return nullptr;
      const std::string failed_stream = op.record->wait();
      if (failed_stream.empty()) return nullptr;
      return std::make_exception_ptr(Error("stream '" + name_ +
                                           "' waited on an event recorded on stream '" +
                                           failed_stream + "' after work there failed"));
    }
    case OpKind::kRecord:
      op.record->complete(skip ? name_ : std::string());
      return nullptr;
  }
  return nullptr;
}

std::chrono::microseconds CpuStream::stress_delay(std::uint64_t op_index) const noexcept {
  const double u = uniform01(stress_.seed, name_hash_, op_index);
  const double span = static_cast<double>(stress_.max_delay.count()) + 1.0;
  return std::chrono::microseconds(static_cast<std::chrono::microseconds::rep>(u * span));
}

}  // namespace vdnn::runtime::cpu
