// CpuEvent and its records: completion flags set by CpuStream workers, awaited by host threads
// and by other streams.
#include "runtime/cpu/CpuEvent.hpp"

#include <utility>

#include "runtime/Error.hpp"
#include "runtime/cpu/CpuStream.hpp"

namespace vdnn::runtime::cpu {

void detail::EventRecord::complete(std::string failed_stream) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = true;
    completed_at_ = std::chrono::steady_clock::now();
    failed_stream_ = std::move(failed_stream);
  }
  completed_cv_.notify_all();
}

bool detail::EventRecord::completed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

std::chrono::steady_clock::time_point detail::EventRecord::completed_at() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_at_;
}

std::string detail::EventRecord::wait() const {
  std::unique_lock<std::mutex> lock(mutex_);
  completed_cv_.wait(lock, [this] { return completed_; });
  return failed_stream_;
}

void CpuEvent::record(Stream& stream) {
  auto* cpu_stream = dynamic_cast<CpuStream*>(&stream);
  VDNN_EXPECTS(
      cpu_stream != nullptr,
      "a CpuEvent can only be recorded on a CpuStream, not on stream '" + stream.name() + "'");
  auto record = std::make_shared<detail::EventRecord>();
  cpu_stream->enqueue_record(record);
  std::lock_guard<std::mutex> lock(mutex_);
  latest_ = std::move(record);
}

bool CpuEvent::query() const {
  const std::shared_ptr<detail::EventRecord> record = latest();
  return record == nullptr || record->completed();
}

void CpuEvent::synchronize() const {
  const std::shared_ptr<detail::EventRecord> record = latest();
  if (record != nullptr) record->wait();
}

double CpuEvent::seconds_since(const Event& earlier) const {
  const auto* other = dynamic_cast<const CpuEvent*>(&earlier);
  VDNN_EXPECTS(other != nullptr, "seconds_since needs two CpuEvents");
  const std::shared_ptr<detail::EventRecord> end = latest();
  const std::shared_ptr<detail::EventRecord> start = other->latest();
  VDNN_EXPECTS(end != nullptr && start != nullptr && end->completed() && start->completed(),
               "seconds_since needs two completed records");
  return std::chrono::duration<double>(end->completed_at() - start->completed_at()).count();
}

std::shared_ptr<detail::EventRecord> CpuEvent::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

}  // namespace vdnn::runtime::cpu
