// Argument checks shared by the CUDA layers: the options a CUDA layer accepts, parameter views and
// narrowing of tensor extents to the int that cuDNN, cuBLAS and the kernels take.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// The device context `options` carry. Throws runtime::InvalidArgument naming `layer` unless the
/// options ask for F32 (the only dtype of the CUDA backend) and carry a context.
runtime::cuda::DeviceContext& checked_context(const LayerOptions& options, std::string_view layer);

/// The shapes param_specs() gives, in its order.
std::vector<Shape> param_shapes(const LayerSpec& spec, const std::vector<Shape>& inputs);

/// True when `view` is a non-empty F32 view of exactly `shape`.
bool view_matches(const TensorView& view, const Shape& shape) noexcept;
/// True when `views` are non-empty F32 views of exactly `shapes`, in order.
bool views_match(const std::vector<TensorView>& views, const std::vector<Shape>& shapes) noexcept;
/// True when `workspace` holds at least `bytes` bytes (an empty view holds 0).
bool workspace_fits(const TensorView& workspace, std::size_t bytes) noexcept;

/// `value` as an int. Throws runtime::ShapeError naming `what` when it does not fit.
int checked_int(std::int64_t value, std::string_view what);

}  // namespace vdnn::layers::cuda
