// NormalizeCuda against NormalizeCpu, bit for bit (Note [Image input]): u8 NHWC image bytes to
// normalized NCHW maps in F32 and BF16, on odd image sizes, with every byte value present.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/Random.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using runtime::TensorView;
using NormalizeCuda = CudaLayerTest;

const layers::NormalizeSpec kImageNet{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};

// Every byte value, then a hash of the index.
std::vector<std::uint8_t> image_bytes(const Shape& shape) {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::uint8_t>(
        i < 256 ? i : runtime::uniform01(5, 0, static_cast<std::uint64_t>(i)) * 256.0);
  }
  return bytes;
}

// The output bytes of `backend`'s normalize layer on `input`.
std::vector<std::uint8_t> run(layers::Backend backend, layers::LayerOptions options,
                              const layers::NormalizeSpec& spec, const Shape& shape,
                              const std::vector<std::uint8_t>& input, cudaStream_t stream) {
  options.dtype = DType::U8;
  options.input_layout = Layout::Nhwc;
  options.layout = Layout::Nchw;
  auto layer = layers::make_layer(backend, spec, {shape}, options);
  std::vector<std::uint8_t> output(shape.bytes(spec.to), 0xFF);
  layers::ForwardArgs args;
  if (backend == layers::Backend::Cpu) {
    args.inputs = {
        TensorView{const_cast<std::uint8_t*>(input.data()), shape, DType::U8, Layout::Nhwc}};
    args.output = TensorView{output.data(), shape, spec.to, Layout::Nchw};
    layer->forward(args);
    return output;
  }
  layers::cuda::DeviceBuffer x(input.size());
  layers::cuda::DeviceBuffer y(output.size());
  VDNN_CHECK_CUDA(cudaMemcpy(x.as<void>(), input.data(), input.size(), cudaMemcpyHostToDevice));
  VDNN_CHECK_CUDA(cudaMemset(y.as<void>(), 0xFF, output.size()));
  args.inputs = {TensorView{x.as<void>(), shape, DType::U8, Layout::Nhwc}};
  args.output = TensorView{y.as<void>(), shape, spec.to, Layout::Nchw};
  layer->forward(args);
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  VDNN_CHECK_CUDA(cudaMemcpy(output.data(), y.as<void>(), output.size(), cudaMemcpyDeviceToHost));
  return output;
}

TEST_F(NormalizeCuda, MatchesTheCpuBitForBitInF32AndBf16) {
  for (const Shape& shape : {Shape::nchw(4, 3, 17, 23), Shape::nchw(1, 3, 224, 224)}) {
    const std::vector<std::uint8_t> input = image_bytes(shape);
    for (const DType to : {DType::F32, DType::BF16}) {
      layers::NormalizeSpec spec = kImageNet;
      spec.to = to;
      const auto cpu = run(layers::Backend::Cpu, {}, spec, shape, input, nullptr);
      const auto gpu =
          run(layers::Backend::Cuda, options(), spec, shape, input, context().compute_stream());
      EXPECT_EQ(cpu, gpu) << shape.to_string() << " to " << runtime::dtype_name(to);
    }
  }
}

TEST_F(NormalizeCuda, RefusesInputsThatAreNotImageBytes) {
  layers::LayerOptions o = options();
  o.input_layout = Layout::Nhwc;  // F32 input
  EXPECT_THROW(layers::make_layer(layers::Backend::Cuda, kImageNet, {Shape::nchw(1, 3, 4, 4)}, o),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
