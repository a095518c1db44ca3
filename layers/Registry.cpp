// The explicit layer registry: every (layer, backend) implementation is listed here, as the
// declarations that map a spec type to its implementation on each backend.
#include "layers/Registry.hpp"

#include <string>
#include <type_traits>
#include <utility>

#include "layers/Optimizer.hpp"
#include "layers/WeightCopies.hpp"
#include "layers/cpu/ActivationCpu.hpp"
#include "layers/cpu/AddCpu.hpp"
#include "layers/cpu/AvgPool2dCpu.hpp"
#include "layers/cpu/BatchNorm2dCpu.hpp"
#include "layers/cpu/BatchNormActivationCpu.hpp"
#include "layers/cpu/BatchNormReluCpu.hpp"
#include "layers/cpu/Bf16EmulationCpu.hpp"
#include "layers/cpu/CastCpu.hpp"
#include "layers/cpu/ConcatCpu.hpp"
#include "layers/cpu/Conv2dCpu.hpp"
#include "layers/cpu/Conv2dReluCpu.hpp"
#include "layers/cpu/DropoutCpu.hpp"
#include "layers/cpu/FlattenCpu.hpp"
#include "layers/cpu/GlobalAvgPoolCpu.hpp"
#include "layers/cpu/LayerNorm2dCpu.hpp"
#include "layers/cpu/LayerScaleCpu.hpp"
#include "layers/cpu/LinearCpu.hpp"
#include "layers/cpu/MaxPool2dCpu.hpp"
#include "layers/cpu/MulCpu.hpp"
#include "layers/cpu/NormalizeCpu.hpp"
#include "layers/cpu/OptimizerCpu.hpp"
#include "layers/cpu/ReluCpu.hpp"
#include "layers/cpu/SoftmaxCrossEntropyCpu.hpp"
#include "layers/cpu/WeightCopierCpu.hpp"
#include "runtime/Error.hpp"
#ifdef VDNN_HAVE_CUDA
#include "layers/cuda/ActivationCuda.hpp"
#include "layers/cuda/AddCuda.hpp"
#include "layers/cuda/AvgPool2dCuda.hpp"
#include "layers/cuda/BatchNorm2dCuda.hpp"
#include "layers/cuda/BatchNormActivationCuda.hpp"
#include "layers/cuda/BatchNormReluCuda.hpp"
#include "layers/cuda/CastCuda.hpp"
#include "layers/cuda/ConcatCuda.hpp"
#include "layers/cuda/Conv2dCuda.hpp"
#include "layers/cuda/DepthwiseConv2dCuda.hpp"
#include "layers/cuda/DropoutCuda.hpp"
#include "layers/cuda/FlattenCuda.hpp"
#include "layers/cuda/GlobalAvgPoolCuda.hpp"
#include "layers/cuda/LayerNorm2dCuda.hpp"
#include "layers/cuda/LayerScaleCuda.hpp"
#include "layers/cuda/LinearCuda.hpp"
#include "layers/cuda/MaxPool2dCuda.hpp"
#include "layers/cuda/MulCuda.hpp"
#include "layers/cuda/NormalizeCuda.hpp"
#include "layers/cuda/OptimizerCuda.hpp"
#include "layers/cuda/ReluCuda.hpp"
#include "layers/cuda/SoftmaxCrossEntropyCuda.hpp"
#include "layers/cuda/WeightCopierCuda.hpp"
#endif

namespace vdnn::layers {
namespace {

// The registry proper: which class implements each spec on each backend.
template <typename Spec>
struct Implementation;

#ifdef VDNN_HAVE_CUDA
#define VDNN_LAYER(Name)              \
  template <>                         \
  struct Implementation<Name##Spec> { \
    using Cpu = cpu::Name##Cpu;       \
    using Cuda = cuda::Name##Cuda;    \
  }
#else
#define VDNN_LAYER(Name)              \
  template <>                         \
  struct Implementation<Name##Spec> { \
    using Cpu = cpu::Name##Cpu;       \
  }
#endif
VDNN_LAYER(Conv2d);
VDNN_LAYER(BatchNorm2d);
VDNN_LAYER(Relu);
VDNN_LAYER(MaxPool2d);
VDNN_LAYER(AvgPool2d);
VDNN_LAYER(GlobalAvgPool);
VDNN_LAYER(Linear);
VDNN_LAYER(Add);
VDNN_LAYER(Concat);
VDNN_LAYER(Dropout);
VDNN_LAYER(Flatten);
VDNN_LAYER(SoftmaxCrossEntropy);
VDNN_LAYER(Silu);
VDNN_LAYER(Gelu);
VDNN_LAYER(Sigmoid);
VDNN_LAYER(Hardswish);
VDNN_LAYER(Relu6);
VDNN_LAYER(Hardsigmoid);
VDNN_LAYER(Mul);
VDNN_LAYER(LayerNorm2d);
VDNN_LAYER(LayerScale);
VDNN_LAYER(StochasticDepth);
VDNN_LAYER(BatchNormRelu);
VDNN_LAYER(BatchNormActivation);
VDNN_LAYER(Cast);
VDNN_LAYER(Normalize);
#undef VDNN_LAYER

// conv2d_relu: on CUDA the convolution itself, built from the fused spec, runs the ReLU as its
// epilogue (Conv2dCuda's contract); the layouts are the convolution's.
template <>
struct Implementation<Conv2dReluSpec> {
  using Cpu = cpu::Conv2dReluCpu;
#ifdef VDNN_HAVE_CUDA
  using Cuda = cuda::Conv2dCuda;
#endif
};

}  // namespace

bool has_backend(Backend backend) noexcept {
#ifdef VDNN_HAVE_CUDA
  return backend == Backend::Cpu || backend == Backend::Cuda;
#else
  return backend == Backend::Cpu;
#endif
}

namespace {

std::unique_ptr<Layer> build(Backend backend, const LayerSpec& spec,
                             const std::vector<Shape>& input_shapes, const LayerOptions& options) {
  return std::visit(
      [&](const auto& s) -> std::unique_ptr<Layer> {
        using Spec = std::decay_t<decltype(s)>;
        if (backend == Backend::Cpu) {
          using Cpu = typename Implementation<Spec>::Cpu;
          // The CPU layers compute in F32 or F64; bf16 storage is emulated around F32 (Note
          // [Precision]), except by the cast, which converts itself.
          if (options.dtype != DType::BF16 || std::is_same_v<Spec, CastSpec>) {
            return std::make_unique<Cpu>(s, input_shapes, options);
          }
          LayerOptions f32 = options;
          f32.dtype = DType::F32;
          return std::make_unique<cpu::Bf16EmulationCpu>(
              std::make_unique<Cpu>(s, input_shapes, f32));
        }
#ifdef VDNN_HAVE_CUDA
        if (backend == Backend::Cuda) {
          // Note [Depthwise convolution]: our kernels where they beat cuDNN's.
          if constexpr (std::is_same_v<Spec, Conv2dSpec>) {
            if (!input_shapes.empty() &&
                cuda::DepthwiseConv2dCuda::preferred(s, input_shapes[0], options)) {
              return std::make_unique<cuda::DepthwiseConv2dCuda>(s, input_shapes, options);
            }
          }
          return std::make_unique<typename Implementation<Spec>::Cuda>(s, input_shapes, options);
        }
#endif
        throw runtime::InvalidArgument(std::string("layer '") + std::string(type_name(spec)) +
                                       "' has no implementation on the " + backend_name(backend) +
                                       " backend in this build");
      },
      spec);
}

}  // namespace

std::unique_ptr<Layer> make_layer(Backend backend, const LayerSpec& spec,
                                  const std::vector<Shape>& input_shapes,
                                  const LayerOptions& options) {
  std::unique_ptr<Layer> layer = build(backend, spec, input_shapes, options);
  // A layer that does not know a layout leaves it at NCHW: refuse it rather than misread memory.
  if (layer->layout() != options.layout || layer->input_layout() != options.input_layout) {
    throw runtime::InvalidArgument(std::string("layer '") + std::string(type_name(spec)) +
                                   "' on the " + backend_name(backend) + " backend cannot take " +
                                   runtime::layout_name(options.input_layout) + " input and give " +
                                   runtime::layout_name(options.layout) +
                                   " output (Note [Layout])");
  }
  return layer;
}

std::unique_ptr<Optimizer> make_optimizer(Backend backend, const LayerOptions& options,
                                          const OptimizerConfig& config, std::size_t parameters) {
  if (backend == Backend::Cpu) return std::make_unique<cpu::OptimizerCpu>(config, parameters);
#ifdef VDNN_HAVE_CUDA
  if (backend == Backend::Cuda) {
    return std::make_unique<cuda::OptimizerCuda>(options, config, parameters);
  }
#else
  static_cast<void>(options);
#endif
  throw runtime::InvalidArgument(std::string("no optimizer on the ") + backend_name(backend) +
                                 " backend in this build");
}

std::unique_ptr<WeightCopier> make_weight_copier(Backend backend, const LayerOptions& options,
                                                 std::vector<WeightCopy> copies) {
  if (backend == Backend::Cpu) return std::make_unique<cpu::WeightCopierCpu>(std::move(copies));
#ifdef VDNN_HAVE_CUDA
  if (backend == Backend::Cuda) return std::make_unique<cuda::WeightCopierCuda>(options, copies);
#else
  static_cast<void>(options);
#endif
  throw runtime::InvalidArgument(std::string("no weight copies on the ") + backend_name(backend) +
                                 " backend in this build");
}

}  // namespace vdnn::layers
