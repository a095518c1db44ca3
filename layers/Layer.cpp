// The Layer base: fixes spec, input shapes and the inferred output shape at construction.
#include "layers/Layer.hpp"

#include <algorithm>
#include <utility>

namespace vdnn::layers {

const char* backend_name(Backend backend) noexcept {
  return backend == Backend::Cuda ? "cuda" : "cpu";
}

Layer::Layer(LayerSpec spec, std::vector<runtime::Shape> input_shapes, DType dtype, Layout layout,
             Layout input_layout)
    : spec_(std::move(spec)),
      input_shapes_(std::move(input_shapes)),
      output_shape_(infer_output_shape(spec_, input_shapes_)),
      dtype_(dtype),
      layout_(layout),
      input_layout_(input_layout) {}

std::size_t Layer::workspace_bytes() const {
  const WorkspaceBytes w = workspace();
  return std::max(w.forward, w.backward);
}

}  // namespace vdnn::layers
