// Shape: the dimensions of a dense tensor (rank 0 to 4, row-major, NCHW for feature maps).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace vdnn::runtime {

/// Element type of a tensor. Parameters are F32; feature maps are F32, or BF16 in mixed precision
/// (Note [Precision]); F64 exists so the CPU backend can run finite-difference gradient checks in
/// double.
/// Element types: F32, F64 and BF16 for tensors that compute; U8 for network inputs that arrive
/// as image bytes (Note [Image input]).
enum class DType : std::uint8_t { F32, F64, BF16, U8 };

/// Bytes of one element of `dtype`.
constexpr std::size_t dtype_size(DType dtype) noexcept {
  return dtype == DType::F64 ? 8 : dtype == DType::BF16 ? 2 : dtype == DType::U8 ? 1 : 4;
}
const char* dtype_name(DType dtype) noexcept;

/// Memory order of a feature map (Note [Layout]). A Shape is always NCHW-logical (n(), c(), h(),
/// w()); the layout says how those elements lie in memory: Nchw (row-major over N, C, H, W) or Nhwc
/// (channels-last: row-major over N, H, W, C). Rank-2 tensors are the same in both.
enum class Layout : std::uint8_t { Nchw, Nhwc };
/// "nchw", "nhwc".
const char* layout_name(Layout layout) noexcept;

/// Dimensions of a tensor, rank at most kMaxRank. Value type; never throws except on a rank over
/// kMaxRank or a negative extent (InvalidArgument).
class Shape {
 public:
  static constexpr int kMaxRank = 4;

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);

  /// Feature-map shape (N, C, H, W).
  static Shape nchw(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    return Shape{n, c, h, w};
  }

  int rank() const noexcept { return rank_; }
  std::int64_t operator[](int axis) const;
  std::int64_t& operator[](int axis);
  /// Number of elements; 1 for rank 0.
  std::int64_t numel() const noexcept;
  std::size_t bytes(DType dtype) const noexcept {
    return static_cast<std::size_t>(numel()) * dtype_size(dtype);
  }

  // NCHW accessors; valid for rank-4 shapes (n() and c() also for rank 2: N x features).
  std::int64_t n() const { return (*this)[0]; }
  std::int64_t c() const { return (*this)[1]; }
  std::int64_t h() const { return (*this)[2]; }
  std::int64_t w() const { return (*this)[3]; }
  /// Elements per sample: numel() / n().
  std::int64_t sample_numel() const;

  /// "[32, 64, 56, 56]".
  std::string to_string() const;

  friend bool operator==(const Shape& a, const Shape& b) noexcept;
  friend bool operator!=(const Shape& a, const Shape& b) noexcept { return !(a == b); }

 private:
  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

/// The elements of a tensor of `shape` stored in `from`, reordered into `to`: a rank-4 tensor
/// between NCHW and NHWC (a KCRS convolution weight and its KRSC form alike); any other rank, or
/// equal layouts, as they are. A permuted tensor's `values` hold shape.numel() elements (else
/// InvalidArgument).
std::vector<float> relayout(const std::vector<float>& values, const Shape& shape, Layout from,
                            Layout to);

}  // namespace vdnn::runtime
