// NetworkDef: a network as a flat list of named layers with named inputs, before validation.
// models/ produces it from JSON; Graph::build validates it and fixes the batch size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layers/LayerSpec.hpp"

namespace vdnn::graph {

/// Name by which layers refer to the network's input images.
inline constexpr const char* kInputName = "input";

struct LayerDef {
  std::string name;  // unique, not kInputName
  layers::LayerSpec spec;
  std::vector<std::string> inputs;  // layer names or kInputName; resolved by Graph::build
  std::string origin;  // where it was defined, for errors: "configs/x.json at /layers/3"
};

struct NetworkDef {
  std::string name;
  std::int64_t channels = 0;  // per-sample input shape (C, H, W)
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
  /// The input arrives as u8 NHWC image bytes, read only by a normalize layer (Note [Image
  /// input]); else as F32 NCHW.
  bool image_input = false;
  std::vector<LayerDef> layers;  // exactly one softmax_cross_entropy, the last layer run
  std::string origin;            // the file, for errors about the network as a whole
};

}  // namespace vdnn::graph
