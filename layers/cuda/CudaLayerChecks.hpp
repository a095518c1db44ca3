// Argument checks shared by the CUDA layers: the options a CUDA layer accepts, parameter views and
// narrowing of tensor extents to the int that cuDNN, cuBLAS and the kernels take.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "layers/Layer.hpp"
#include "runtime/BFloat16.hpp"

namespace vdnn::layers::cuda {

/// The feature-map dtypes a CUDA layer takes (LayerOptions::dtype, Note [Precision]).
enum class Precisions {
  F32,        // F32 only
  F32OrBf16,  // F32 or BF16
};

/// The device context `options` carry. Throws runtime::InvalidArgument naming `layer` unless the
/// options ask for a dtype of `precisions` and carry a context.
runtime::cuda::DeviceContext& checked_context(const LayerOptions& options, std::string_view layer,
                                              Precisions precisions = Precisions::F32);

/// Throws runtime::InvalidArgument: the CUDA backend has no kernels for `dtype`.
[[noreturn]] void throw_unsupported_dtype(DType dtype);

/// Calls fn(T{}) with T the host element type of `dtype`: float for F32, runtime::BFloat16 for
/// BF16. Throws runtime::InvalidArgument for another dtype.
template <typename Fn>
void with_element_type(DType dtype, Fn&& fn) {
  if (dtype == DType::BF16) {
    fn(runtime::BFloat16{});
  } else if (dtype == DType::F32) {
    fn(float{});
  } else {
    throw_unsupported_dtype(dtype);
  }
}

/// The shapes param_specs() gives, in its order.
std::vector<Shape> param_shapes(const LayerSpec& spec, const std::vector<Shape>& inputs);

/// True when `view` is a non-empty, packed view of exactly `shape` whose elements are `dtype`: the
/// layers that check their views with it read none row-strided (only the batch norms' x and the
/// concatenation's do, layers::reads_row_strided_input, Note [Dense block storage]).
bool view_matches(const TensorView& view, const Shape& shape, DType dtype = DType::F32) noexcept;
/// True when `views` are non-empty F32 views of exactly `shapes`, in order.
bool views_match(const std::vector<TensorView>& views, const std::vector<Shape>& shapes) noexcept;
/// As views_match, except that in a BF16 layer (`bf16`) the first view, a weight, may also be its
/// BF16 copy (LayerOptions::bf16_weight_copies; Note [Precision]).
bool params_match(const std::vector<TensorView>& views, const std::vector<Shape>& shapes,
                  bool bf16) noexcept;
/// True when `workspace` holds at least `bytes` bytes (an empty view holds 0).
bool workspace_fits(const TensorView& workspace, std::size_t bytes) noexcept;

/// `value` as an int. Throws runtime::ShapeError naming `what` when it does not fit.
int checked_int(std::int64_t value, std::string_view what);

}  // namespace vdnn::layers::cuda
