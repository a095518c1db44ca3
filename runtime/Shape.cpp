// Shape arithmetic and printing.
#include "runtime/Shape.hpp"

#include <string>

#include "runtime/Error.hpp"

namespace vdnn::runtime {

const char* dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::F64:
      return "f64";
    case DType::BF16:
      return "bf16";
    case DType::U8:
      return "u8";
    case DType::F32:
      break;
  }
  return "f32";
}

const char* layout_name(Layout layout) noexcept { return layout == Layout::Nhwc ? "nhwc" : "nchw"; }

Shape::Shape(std::initializer_list<std::int64_t> dims) {
  VDNN_EXPECTS(dims.size() <= static_cast<std::size_t>(kMaxRank), "shape rank exceeds 4");
  for (std::int64_t d : dims) {
    VDNN_EXPECTS(d >= 0, "negative extent in shape");
    dims_[static_cast<std::size_t>(rank_++)] = d;
  }
}

std::int64_t Shape::operator[](int axis) const {
  VDNN_EXPECTS(axis >= 0 && axis < rank_, "axis out of range for " + to_string());
  return dims_[static_cast<std::size_t>(axis)];
}

std::int64_t& Shape::operator[](int axis) {
  VDNN_EXPECTS(axis >= 0 && axis < rank_, "axis out of range for " + to_string());
  return dims_[static_cast<std::size_t>(axis)];
}

std::int64_t Shape::numel() const noexcept {
  std::int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<std::size_t>(i)];
  return n;
}

std::int64_t Shape::sample_numel() const {
  VDNN_EXPECTS(rank_ >= 1 && dims_[0] > 0, "sample_numel of an empty batch");
  return numel() / dims_[0];
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(dims_[static_cast<std::size_t>(i)]);
  }
  return s + "]";
}

bool operator==(const Shape& a, const Shape& b) noexcept {
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i) {
    if (a.dims_[static_cast<std::size_t>(i)] != b.dims_[static_cast<std::size_t>(i)]) return false;
  }
  return true;
}

std::vector<float> relayout(const std::vector<float>& values, const Shape& shape, Layout from,
                            Layout to) {
  if (from == to || shape.rank() != 4) return values;
  VDNN_EXPECTS(static_cast<std::int64_t>(values.size()) == shape.numel(),
               "relayout: expected " + std::to_string(shape.numel()) + " values of " +
                   shape.to_string() + ", got " + std::to_string(values.size()));
  std::vector<float> out(values.size());
  std::size_t nchw = 0;
  for (std::int64_t n = 0; n < shape.n(); ++n) {
    for (std::int64_t c = 0; c < shape.c(); ++c) {
      for (std::int64_t h = 0; h < shape.h(); ++h) {
        for (std::int64_t w = 0; w < shape.w(); ++w, ++nchw) {
          const auto nhwc =
              static_cast<std::size_t>(((n * shape.h() + h) * shape.w() + w) * shape.c() + c);
          if (to == Layout::Nhwc) {
            out[nhwc] = values[nchw];
          } else {
            out[nchw] = values[nhwc];
          }
        }
      }
    }
  }
  return out;
}

}  // namespace vdnn::runtime
