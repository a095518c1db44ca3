// Reads a layer entry's "type" and attributes into a layers::LayerSpec.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "layers/LayerSpec.hpp"
#include "models/config/Cursor.hpp"

namespace vdnn::models::config {

/// Largest value of an integer attribute (channels, features, kernel, stride, padding, dilation,
/// groups) and of an input extent: 2^20. Anything larger is taken for a typo.
inline constexpr std::int64_t kMaxExtent = std::int64_t{1} << 20;

/// Reads the layer object at `layer`: its "type" (one of layers::known_type_names()) and the
/// attributes of that type, overriding a default-constructed spec so that every default comes
/// from layers/LayerSpec.hpp. `structural_keys` are the entry's other allowed keys ("name",
/// "inputs", ...), which this does not read. Throws ConfigError on an unknown type (listing the
/// known ones) or key, a missing required attribute, or a value of the wrong type or range.
layers::LayerSpec read_layer_spec(const Cursor& layer,
                                  const std::vector<std::string_view>& structural_keys);

}  // namespace vdnn::models::config
