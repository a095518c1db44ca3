// Argument checks shared by the CUDA layers.
#include "layers/cuda/CudaLayerChecks.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "runtime/Error.hpp"

namespace vdnn::layers::cuda {

runtime::cuda::DeviceContext& checked_context(const LayerOptions& options, std::string_view layer,
                                              Precisions precisions) {
  const bool bf16 = precisions == Precisions::F32OrBf16 && options.dtype == DType::BF16;
  if (options.dtype != DType::F32 && !bf16) {
    throw runtime::InvalidArgument(
        std::string(layer) + ": this CUDA layer runs " +
        (precisions == Precisions::F32 ? "F32 only" : "F32 or BF16 only") + ", not " +
        runtime::dtype_name(options.dtype));
  }
  if (options.cuda == nullptr) {
    throw runtime::InvalidArgument(std::string(layer) +
                                   ": LayerOptions::cuda must name the device context to run on");
  }
  return *options.cuda;
}

std::vector<Shape> param_shapes(const LayerSpec& spec, const std::vector<Shape>& inputs) {
  std::vector<Shape> shapes;
  for (const ParamSpec& param : param_specs(spec, inputs)) shapes.push_back(param.shape);
  return shapes;
}

void throw_unsupported_dtype(DType dtype) {
  throw runtime::InvalidArgument(std::string("the CUDA backend has no kernels for ") +
                                 runtime::dtype_name(dtype));
}

bool view_matches(const TensorView& view, const Shape& shape, DType dtype) noexcept {
  return !view.empty() && view.dtype == dtype && view.shape == shape && view.packed();
}

bool views_match(const std::vector<TensorView>& views, const std::vector<Shape>& shapes) noexcept {
  return std::equal(
      views.begin(), views.end(), shapes.begin(), shapes.end(),
      [](const TensorView& view, const Shape& shape) { return view_matches(view, shape); });
}

bool params_match(const std::vector<TensorView>& views, const std::vector<Shape>& shapes,
                  bool bf16) noexcept {
  if (!bf16 || views.empty() || shapes.empty() || views[0].dtype != DType::BF16) {
    return views_match(views, shapes);
  }
  return view_matches(views[0], shapes[0], DType::BF16) &&
         views_match({views.begin() + 1, views.end()}, {shapes.begin() + 1, shapes.end()});
}

bool workspace_fits(const TensorView& workspace, std::size_t bytes) noexcept {
  return bytes == 0 || (!workspace.empty() && workspace.bytes() >= bytes);
}

int checked_int(std::int64_t value, std::string_view what) {
  if (value < 0 || value > std::numeric_limits<int>::max()) {
    throw runtime::ShapeError(std::string(what) + " = " + std::to_string(value) +
                              " does not fit the 32-bit extents of the CUDA backend");
  }
  return static_cast<int>(value);
}

}  // namespace vdnn::layers::cuda
