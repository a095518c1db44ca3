// TensorView: a non-owning, typed view of dense tensor memory (host or device).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"
#include "runtime/Shape.hpp"

namespace vdnn::runtime {

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::F32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::F64;
}
template <>
constexpr DType dtype_of<BFloat16>() {
  return DType::BF16;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::U8;
}

/// Non-owning view: a pointer, a shape, an element type and a memory layout. Copying a view never
/// copies data and never moves it between host and device. A default view is empty (null data).
struct TensorView {
  void* data = nullptr;
  Shape shape;
  DType dtype = DType::F32;
  Layout layout = Layout::Nchw;  // of rank-4 shapes; the shape stays NCHW-logical

  bool empty() const noexcept { return data == nullptr; }
  std::size_t bytes() const noexcept { return shape.bytes(dtype); }
  std::int64_t numel() const noexcept { return shape.numel(); }

  /// Typed pointer; throws InvalidArgument when T does not match dtype or the view is empty.
  template <typename T>
  T* as() const {
    VDNN_EXPECTS(dtype == dtype_of<T>(), "tensor element type mismatch");
    VDNN_EXPECTS(data != nullptr, "access to an empty tensor view");
    return static_cast<T*>(data);
  }
};

}  // namespace vdnn::runtime
