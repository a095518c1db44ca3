// Residency transitions: which stream does what, gated by which event.
#include "runtime/ResidentTensor.hpp"

#include <utility>

#include "runtime/ByteSize.hpp"
#include "runtime/Error.hpp"

namespace vdnn::runtime {

const char* residency_name(Residency residency) noexcept {
  switch (residency) {
    case Residency::Device:
      return "device";
    case Residency::Offloading:
      return "offloading";
    case Residency::Host:
      return "host";
    case Residency::Prefetching:
      return "prefetching";
    case Residency::Evicted:
      return "evicted";
    case Residency::Absent:
      break;
  }
  return "absent";
}

ResidentTensor::ResidentTensor(std::string name, Shape shape, ExecutionContext& context,
                               Layout layout, DType dtype)
    : name_(std::move(name)),
      shape_(shape),
      layout_(layout),
      dtype_(dtype),
      context_(context),
      produced_(context.make_event()),
      offload_started_(context.make_event(/*timing=*/true)),
      offload_ended_(context.make_event(/*timing=*/true)),
      offloaded_(context.make_event()),
      released_(context.make_event()),
      gate_(context.make_event()),
      prefetch_started_(context.make_event(/*timing=*/true)),
      prefetch_ended_(context.make_event(/*timing=*/true)),
      prefetched_(context.make_event()) {}

void ResidentTensor::expect(Residency state, const char* transition) const {
  if (residency_ != state) {
    throw InvalidArgument("tensor '" + name_ + "': cannot " + transition + " while " +
                          residency_name(residency_) + " (expected " + residency_name(state) + ")");
  }
}

Buffer ResidentTensor::take(MemoryResource& resource, const char* what) const {
  try {
    return Buffer(resource, bytes());
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(std::string(what) + " for tensor '" + name_ + "' (" + format_bytes(bytes()) +
                          "): " + e.what(),
                      e.bytes_requested(), e.bytes_in_use(), e.bytes_limit());
  }
}

template <typename Move>
void ResidentTensor::timed(Stream& stream, Event* started, Event* ended, Event& done, Move move) {
  if (started != nullptr) started->record(stream);
  move(stream);
  if (ended != nullptr) ended->record(stream);
  done.record(stream);
}

Event* ResidentTensor::timing(const std::unique_ptr<Event>& event) const noexcept {
  return time_copies_ ? event.get() : nullptr;
}

void ResidentTensor::allocate(MemoryResource& device) {
  expect(Residency::Absent, "allocate");
  device_ = take(device, "device memory");
  residency_ = Residency::Device;
}

void ResidentTensor::alias(const void* data) {
  expect(Residency::Device, "alias");
  VDNN_EXPECTS(data != nullptr, "tensor '" + name_ + "' cannot alias null memory");
  alias_ = data;
}

// Read only while aliased: no layer writes a tensor it is handed as an input, and only inputs are
// aliased.
void* ResidentTensor::device_data() const noexcept {
  return alias_ != nullptr ? const_cast<void*>(alias_) : device_.data();
}

void ResidentTensor::offload(MemoryResource& pinned) {
  expect(Residency::Device, "offload");
  pinned_ = take(pinned, "pinned host memory");
  // After the compute work so far: the map's producer and last forward reader.
  TimedCopy copy{pinned_.data(), device_data(), bytes()};
  copy.after_stream = &context_.compute();
  copy.mark = produced_.get();
  copy.started = timing(offload_started_);
  copy.ended = timing(offload_ended_);
  copy.done = offloaded_.get();
  context_.offload().timed_copy(copy);
  residency_ = Residency::Offloading;
}

void ResidentTensor::release(bool poison) {
  expect(Residency::Offloading, "release");
  if (poison) {
    produced_->record(context_.compute());  // now: after the last forward reader
    context_.offload().wait(*produced_);
    context_.fill_nan_async(context_.offload(), device_.data(), bytes());
    released_->record(context_.offload());
    device_.reset_after(*released_);
  } else {
    // Whatever takes the block next is ordered after the compute work enqueued so far: on the
    // compute stream by its order, a prefetch or an upload by its wait for compute (fill). Only
    // the copy's read is left to wait for.
    device_.reset_after(*offloaded_);
  }
  alias_ = nullptr;
  residency_ = Residency::Host;
}

// `after`: what the copy waits for besides the compute work enqueued so far (or null).
void ResidentTensor::fill(const void* host, Stream& stream, const Event* after) {
  // After the compute work so far: whatever last read the block (Note [Stream choreography]).
  TimedCopy copy{device_.data(), host, bytes(), {after, nullptr}};
  copy.after_stream = &context_.compute();
  copy.mark = gate_.get();
  copy.started = timing(prefetch_started_);
  copy.ended = timing(prefetch_ended_);
  copy.done = prefetched_.get();
  stream.timed_copy(copy);
  residency_ = Residency::Prefetching;
}

void ResidentTensor::prefetch(MemoryResource& device) {
  expect(Residency::Host, "prefetch");
  device_ = take(device, "device memory");
  // The copy back reads what the offload copy writes: nothing else orders the two copy streams
  // when a map is prefetched soon after its offload (Note [Stream choreography]).
  fill(pinned_.data(), context_.prefetch(), offloaded_.get());
}

void ResidentTensor::upload(MemoryResource& device, const void* host, Stream& stream) {
  expect(Residency::Absent, "upload");
  device_ = take(device, "device memory");
  fill(host, stream, nullptr);
}

void ResidentTensor::await_prefetch() {
  expect(Residency::Prefetching, "await its prefetch");
  context_.compute().wait(*prefetched_);
  pinned_.reset_after(*prefetched_);
  residency_ = Residency::Device;
}

void ResidentTensor::free(bool poison) {
  expect(Residency::Device, "free");
  if (poison) context_.fill_nan_async(context_.compute(), device_.data(), bytes());
  device_.reset();
  alias_ = nullptr;
  residency_ = Residency::Absent;
}

void ResidentTensor::evict() {
  expect(Residency::Device, "evict");
  VDNN_EXPECTS(alias_ == nullptr, "tensor '" + name_ + "' aliases memory that does not migrate");
  produced_->record(context_.compute());  // after the last forward reader
  context_.offload().wait(*produced_);
  timed(context_.offload(), timing(offload_started_), timing(offload_ended_), *offloaded_,
        [&](Stream& s) { context_.migrate_async(s, device_.data(), bytes(), MigrateTo::Host); });
  residency_ = Residency::Evicted;
}

void ResidentTensor::migrate_back() {
  expect(Residency::Evicted, "migrate back");
  gate_->record(context_.compute());
  context_.prefetch().wait(*gate_);
  context_.prefetch().wait(*offloaded_);
  timed(context_.prefetch(), timing(prefetch_started_), timing(prefetch_ended_), *prefetched_,
        [&](Stream& s) { context_.migrate_async(s, device_.data(), bytes(), MigrateTo::Device); });
  residency_ = Residency::Prefetching;
}

void ResidentTensor::fault_in() {
  expect(Residency::Evicted, "fault in");
  context_.compute().wait(*offloaded_);
  residency_ = Residency::Device;
}

void ResidentTensor::drop() noexcept {
  device_.reset();
  alias_ = nullptr;
  pinned_.reset();
  residency_ = Residency::Absent;
}

TensorView ResidentTensor::view() const {
  if (residency_ != Residency::Device && residency_ != Residency::Offloading) {
    throw InvalidArgument("tensor '" + name_ + "' is not resident on the device (it is " +
                          residency_name(residency_) + "); the plan must prefetch it first");
  }
  return {device_data(), shape_, dtype_, layout_};
}

}  // namespace vdnn::runtime
