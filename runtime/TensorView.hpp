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
/// A rank-4 view may have its rows apart (row_stride): a row is a pixel's channels in NHWC and a
/// sample in NCHW, and a view with a row stride is a channel prefix of a wider map (a dense block's
/// concatenation inside the block's last one, Note [Dense block storage]); only the layers that say
/// so read such views (layers::reads_row_strided_input).
struct TensorView {
  void* data = nullptr;
  Shape shape;
  DType dtype = DType::F32;
  Layout layout = Layout::Nchw;  // of rank-4 shapes; the shape stays NCHW-logical
  std::int64_t row_stride = 0;   // elements from one row to the next; 0: packed (row_elements())

  bool empty() const noexcept { return data == nullptr; }
  std::size_t bytes() const noexcept { return shape.bytes(dtype); }
  std::int64_t numel() const noexcept { return shape.numel(); }
  /// Rows of a rank-4 view: N * H * W pixels in NHWC, N samples in NCHW.
  std::int64_t rows() const {
    return layout == Layout::Nhwc ? shape.n() * shape.h() * shape.w() : shape.n();
  }
  /// Elements of one row: C in NHWC, C * H * W in NCHW.
  std::int64_t row_elements() const {
    return layout == Layout::Nhwc ? shape.c() : shape.sample_numel();
  }
  /// Elements from one row to the next: row_stride, or row_elements() when packed.
  std::int64_t row_pitch() const { return row_stride != 0 ? row_stride : row_elements(); }
  bool packed() const { return row_stride == 0 || row_stride == row_elements(); }

  /// Typed pointer; throws InvalidArgument when T does not match dtype or the view is empty.
  template <typename T>
  T* as() const {
    VDNN_EXPECTS(dtype == dtype_of<T>(), "tensor element type mismatch");
    VDNN_EXPECTS(data != nullptr, "access to an empty tensor view");
    return static_cast<T*>(data);
  }
};

}  // namespace vdnn::runtime
