// MemoryResource: the allocation interface every vdnn buffer comes from (in the style of RMM's
// device_memory_resource), and Buffer, the one RAII owner of an allocation.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace vdnn::runtime {

class Event;

/// Abstract allocator. allocate() throws OutOfMemory (the resource stays usable) and returns
/// nullptr for zero bytes; deallocate() never throws and ignores nullptr. Pointers are aligned to
/// at least kAlignment. Thread-safety is per implementation (documented there).
class MemoryResource {
 public:
  static constexpr std::size_t kAlignment = 256;
  /// `bytes` rounded up to a multiple of kAlignment (the unit pools hand out).
  static constexpr std::size_t align_up(std::size_t bytes) noexcept {
    return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }

  MemoryResource() = default;
  MemoryResource(const MemoryResource&) = delete;
  MemoryResource& operator=(const MemoryResource&) = delete;
  MemoryResource(MemoryResource&&) = delete;
  MemoryResource& operator=(MemoryResource&&) = delete;
  virtual ~MemoryResource() = default;

  void* allocate(std::size_t bytes) { return bytes == 0 ? nullptr : do_allocate(bytes); }
  void deallocate(void* ptr, std::size_t bytes) noexcept {
    if (ptr != nullptr) do_deallocate(ptr, bytes);
  }
  /// Frees memory that queued work (e.g. an offload copy) may still read: it is not handed out
  /// again before `event` completes. The bytes stop counting as in use now, so accounting is the
  /// same on every run; an allocation that needs the memory waits for the event. The default
  /// waits for the event here and then deallocates.
  void deallocate_after(void* ptr, std::size_t bytes, const Event& event) {
    if (ptr != nullptr) do_deallocate_after(ptr, bytes, event);
  }
  /// True when memory from this resource is directly addressable by host code.
  virtual bool host_accessible() const noexcept = 0;
  /// Short name for messages and traces ("host", "device-pool", ...).
  virtual std::string name() const = 0;

 private:
  virtual void* do_allocate(std::size_t bytes) = 0;
  virtual void do_deallocate(void* ptr, std::size_t bytes) noexcept = 0;
  virtual void do_deallocate_after(void* ptr, std::size_t bytes, const Event& event);
};

/// Move-only owner of one allocation from a MemoryResource; frees it on destruction. The resource
/// must outlive the buffer.
class Buffer {
 public:
  Buffer() = default;
  Buffer(MemoryResource& resource, std::size_t bytes)
      : resource_(&resource), data_(resource.allocate(bytes)), bytes_(bytes) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    Buffer(std::move(other)).swap(*this);
    return *this;
  }
  ~Buffer() { reset(); }
  /// A buffer that owns nothing: `bytes` at `data` inside memory another buffer owns, which must
  /// outlive it (a gradient's slice of the flat gradient buffer, Note [Data parallelism]).
  static Buffer borrowed(void* data, std::size_t bytes) noexcept {
    Buffer view;
    view.data_ = data;
    view.bytes_ = bytes;
    return view;
  }

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  bool empty() const noexcept { return data_ == nullptr; }
  /// Frees the allocation behind `event` (see MemoryResource::deallocate_after); the buffer
  /// becomes empty.
  void reset_after(const Event& event) {
    if (resource_ != nullptr) resource_->deallocate_after(data_, bytes_, event);
    resource_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
  }
  /// Frees the allocation now; the buffer becomes empty.
  void reset() noexcept {
    if (resource_ != nullptr) resource_->deallocate(data_, bytes_);
    resource_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  void swap(Buffer& other) noexcept {
    std::swap(resource_, other.resource_);
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }
  MemoryResource* resource_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace vdnn::runtime
