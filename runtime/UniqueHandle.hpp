// UniqueHandle: the one generic move-only RAII owner of an opaque handle (CUDA stream, event,
// cuDNN/cuBLAS handle, descriptor, buffer). Backend-neutral: it includes no CUDA header.
#pragma once

#include <type_traits>
#include <utility>

namespace vdnn::runtime {

/// Owns one `Handle` and destroys it with `Deleter::destroy(handle)` unless it is the null handle
/// (`Handle{}`). `Deleter::destroy` must be a static noexcept function that never throws; it runs
/// exactly once per owned handle. Move-only; a moved-from owner holds the null handle. Not
/// thread-safe (like std::unique_ptr); the handle itself keeps whatever guarantees its library
/// gives.
template <typename Handle, typename Deleter>
class UniqueHandle {
  static_assert(std::is_trivially_copyable_v<Handle>, "handles are plain values (pointers, ids)");
  static_assert(noexcept(Deleter::destroy(std::declval<Handle>())),
                "Deleter::destroy must be noexcept: it runs in destructors");

 public:
  UniqueHandle() noexcept = default;
  /// Takes ownership of `handle` (which may be null).
  explicit UniqueHandle(Handle handle) noexcept : handle_(handle) {}
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(other.release()) {}
  /// Destroys the handle held so far, then takes over `other`'s.
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    reset(other.release());
    return *this;
  }
  ~UniqueHandle() { reset(); }

  /// The owned handle (null when empty); ownership stays here.
  Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != Handle{}; }
  /// Gives up ownership without destroying; the caller now owns the returned handle.
  [[nodiscard]] Handle release() noexcept { return std::exchange(handle_, Handle{}); }
  /// Destroys the owned handle (if any) and takes ownership of `handle`.
  void reset(Handle handle = Handle{}) noexcept {
    const Handle old = std::exchange(handle_, handle);
    if (old != Handle{}) Deleter::destroy(old);
  }

 private:
  Handle handle_{};
};

}  // namespace vdnn::runtime
