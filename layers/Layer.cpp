// The Layer base: fixes spec, input shapes and the inferred output shape at construction; and the
// row geometry of row-strided views the layers share.
#include "layers/Layer.hpp"

#include <algorithm>
#include <cstddef>
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

std::int64_t row_pitch(const TensorView& view, std::int64_t row_elements) noexcept {
  return view.row_stride != 0 ? view.row_stride : row_elements;
}

bool lies_in_place(const TensorView& part, std::int64_t part_row, const TensorView& whole,
                   std::int64_t whole_row, std::int64_t offset) noexcept {
  const auto* place = static_cast<const std::byte*>(whole.data) +
                      static_cast<std::size_t>(offset) * runtime::dtype_size(whole.dtype);
  return part.data == place && part.dtype == whole.dtype &&
         row_pitch(part, part_row) == row_pitch(whole, whole_row);
}

std::size_t Layer::workspace_bytes() const {
  const WorkspaceBytes w = workspace();
  return std::max(w.forward, w.backward);
}

}  // namespace vdnn::layers
