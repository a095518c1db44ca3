// CPU convolution: per image and per group, im2col into the workspace, then one Eigen GEMM for the
// forward pass and for each of the two backward products; col2im scatters the data gradient back.
#include "layers/cpu/Conv2dCpu.hpp"

#include <algorithm>
#include <utility>

#include "layers/cpu/EigenMaps.hpp"
#include "layers/cpu/ParamLayerArgs.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
Conv2dCpu::Conv2dCpu(const Conv2dSpec& spec, std::vector<Shape> input_shapes,
                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      param_shapes_(param_shape_list(spec, this->input_shapes())),
      window_(Window2d::for_conv(spec, this->input_shapes()[0], output_shape())),
      in_per_group_(this->input_shapes()[0].c() / spec.groups),
      out_per_group_(spec.out_channels / spec.groups),
      direct_(spec.kernel == Pair{1, 1} && spec.stride == Pair{1, 1} &&
              spec.padding == Pair{0, 0}) {}

WorkspaceBytes Conv2dCpu::workspace() const {
  if (direct_) return {};
  const std::size_t columns =
      static_cast<std::size_t>(in_per_group_ * window_.taps() * window_.out_plane()) *
      runtime::dtype_size(dtype());
  return {columns, columns};
}

void Conv2dCpu::forward(const ForwardArgs& args) {
  expect_param_forward("Conv2dCpu", args, input_shapes()[0], output_shape(), param_shapes_);
  if (dtype() == DType::F64) {
    forward_as<double>(args);
  } else {
    forward_as<float>(args);
  }
}

void Conv2dCpu::backward(const BackwardArgs& args) {
  expect_param_backward("Conv2dCpu", args, input_shapes()[0], output_shape(), param_shapes_);
  if (dtype() == DType::F64) {
    backward_as<double>(args);
  } else {
    backward_as<float>(args);
  }
}

template <typename T>
T* Conv2dCpu::column_buffer(const TensorView& workspace) const {
  if (direct_) return nullptr;
  VDNN_EXPECTS(!workspace.empty() && workspace.bytes() >= workspace_bytes(),
               "Conv2dCpu: the workspace view is smaller than workspace_bytes()");
  return static_cast<T*>(workspace.data);
}

template <typename T>
const T* Conv2dCpu::unfold(const T* x_g, T* workspace) const {
  if (direct_) return x_g;
  im2col(window_, in_per_group_, x_g, workspace);
  return workspace;
}

template <typename T>
void Conv2dCpu::forward_as(const ForwardArgs& args) const {
  const Shape& x_shape = input_shapes()[0];
  const std::int64_t rows = in_per_group_ * window_.taps();
  const std::int64_t cols = window_.out_plane();
  const T* x = args.inputs[0].as<T>();
  const T* weight = args.params[0].as<T>();
  const T* bias = spec_.bias ? args.params[1].as<T>() : nullptr;
  T* y = args.output.as<T>();
  T* workspace = column_buffer<T>(args.workspace);

  for (std::int64_t n = 0; n < x_shape.n(); ++n) {
    for (std::int64_t g = 0; g < spec_.groups; ++g) {
      const T* col =
          unfold(x + (n * x_shape.c() + g * in_per_group_) * window_.in_plane(), workspace);
      const std::int64_t first_out = g * out_per_group_;
      MatrixMap<T> y_g(y + (n * spec_.out_channels + first_out) * cols, out_per_group_, cols);
      y_g.noalias() = ConstMatrixMap<T>(weight + first_out * rows, out_per_group_, rows) *
                      ConstMatrixMap<T>(col, rows, cols);
      if (bias != nullptr) {
        y_g.colwise() += ConstVectorMap<T>(bias + first_out, out_per_group_);
      }
    }
  }
}

template <typename T>
void Conv2dCpu::backward_as(const BackwardArgs& args) const {
  const Shape& x_shape = input_shapes()[0];
  const std::int64_t rows = in_per_group_ * window_.taps();
  const std::int64_t cols = window_.out_plane();
  const std::int64_t in_size = in_per_group_ * window_.in_plane();
  const T* x = args.inputs[0].as<T>();
  const T* dy = args.grad_output.as<T>();
  const T* weight = args.params[0].as<T>();
  T* dweight = args.grad_params[0].as<T>();
  const GradTarget& dx_target = args.grad_inputs[0];
  T* dx = dx_target.tensor.empty() ? nullptr : dx_target.tensor.as<T>();
  T* workspace = column_buffer<T>(args.workspace);

  if (spec_.bias) {
    VectorMap<T> dbias(args.grad_params[1].as<T>(), spec_.out_channels);
    dbias.setZero();
    for (std::int64_t n = 0; n < x_shape.n(); ++n) {
      dbias += ConstMatrixMap<T>(dy + n * spec_.out_channels * cols, spec_.out_channels, cols)
                   .rowwise()
                   .sum();
    }
  }

  for (std::int64_t n = 0; n < x_shape.n(); ++n) {
    for (std::int64_t g = 0; g < spec_.groups; ++g) {
      const std::int64_t x_offset = (n * x_shape.c() + g * in_per_group_) * window_.in_plane();
      const std::int64_t first_out = g * out_per_group_;
      ConstMatrixMap<T> dy_g(dy + (n * spec_.out_channels + first_out) * cols, out_per_group_,
                             cols);
      ConstMatrixMap<T> w_g(weight + first_out * rows, out_per_group_, rows);

      // grad_params are overwritten: the first image stores, the others add.
      ConstMatrixMap<T> col(unfold(x + x_offset, workspace), rows, cols);
      store(MatrixMap<T>(dweight + first_out * rows, out_per_group_, rows), dy_g * col.transpose(),
            n > 0);

      if (dx == nullptr) continue;
      T* dx_g = dx + x_offset;
      if (direct_) {
        store(MatrixMap<T>(dx_g, rows, cols), w_g.transpose() * dy_g, dx_target.accumulate);
      } else {
        // The columns were consumed by the weight gradient above, so the buffer is free again.
        MatrixMap<T>(workspace, rows, cols).noalias() = w_g.transpose() * dy_g;
        if (!dx_target.accumulate) std::fill_n(dx_g, in_size, T(0));
        col2im_add(window_, in_per_group_, workspace, dx_g);
      }
    }
  }
}

}  // namespace vdnn::layers::cpu
