// The explicit layer registry: maps (backend, LayerSpec) to an implementation. No static
// self-registration: every implementation is listed in the registry's source file.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers {

/// True when this build has layer implementations for `backend`.
bool has_backend(Backend backend) noexcept;

/// Builds the implementation of `spec` on `backend` for the given input shapes.
/// Throws runtime::ShapeError for shapes the layer cannot take, and runtime::InvalidArgument when
/// the backend has no implementation (never a silent fallback to another backend) or the
/// implementation cannot take options.layout and options.input_layout.
std::unique_ptr<Layer> make_layer(Backend backend, const LayerSpec& spec,
                                  const std::vector<runtime::Shape>& input_shapes,
                                  const LayerOptions& options);

}  // namespace vdnn::layers
