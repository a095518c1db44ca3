// The explicit layer registry: every (layer, backend) implementation is listed here.
#include "layers/Registry.hpp"

#include "layers/SgdUpdate.hpp"

#include <string>

#include "layers/cpu/AddCpu.hpp"
#include "layers/cpu/AvgPool2dCpu.hpp"
#include "layers/cpu/BatchNorm2dCpu.hpp"
#include "layers/cpu/ConcatCpu.hpp"
#include "layers/cpu/Conv2dCpu.hpp"
#include "layers/cpu/DropoutCpu.hpp"
#include "layers/cpu/FlattenCpu.hpp"
#include "layers/cpu/GlobalAvgPoolCpu.hpp"
#include "layers/cpu/LinearCpu.hpp"
#include "layers/cpu/MaxPool2dCpu.hpp"
#include "layers/cpu/ReluCpu.hpp"
#include "layers/cpu/SgdUpdateCpu.hpp"
#include "layers/cpu/SoftmaxCrossEntropyCpu.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers {
namespace {

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

std::unique_ptr<Layer> make_cpu_layer(const LayerSpec& spec, const std::vector<Shape>& in,
                                      const LayerOptions& o) {
  return std::visit(
      Overloaded{
          [&](const Conv2dSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::Conv2dCpu>(s, in, o);
          },
          [&](const BatchNorm2dSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::BatchNorm2dCpu>(s, in, o);
          },
          [&](const ReluSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::ReluCpu>(s, in, o);
          },
          [&](const MaxPool2dSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::MaxPool2dCpu>(s, in, o);
          },
          [&](const AvgPool2dSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::AvgPool2dCpu>(s, in, o);
          },
          [&](const GlobalAvgPoolSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::GlobalAvgPoolCpu>(s, in, o);
          },
          [&](const LinearSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::LinearCpu>(s, in, o);
          },
          [&](const AddSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::AddCpu>(s, in, o);
          },
          [&](const ConcatSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::ConcatCpu>(s, in, o);
          },
          [&](const DropoutSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::DropoutCpu>(s, in, o);
          },
          [&](const FlattenSpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::FlattenCpu>(s, in, o);
          },
          [&](const SoftmaxCrossEntropySpec& s) -> std::unique_ptr<Layer> {
            return std::make_unique<cpu::SoftmaxCrossEntropyCpu>(s, in, o);
          },
      },
      spec);
}

}  // namespace

bool has_backend(Backend backend) noexcept { return backend == Backend::Cpu; }

std::unique_ptr<Layer> make_layer(Backend backend, const LayerSpec& spec,
                                  const std::vector<Shape>& input_shapes,
                                  const LayerOptions& options) {
  switch (backend) {
    case Backend::Cpu:
      return make_cpu_layer(spec, input_shapes, options);
    case Backend::Cuda:
      break;
  }
  throw runtime::InvalidArgument(std::string("layer '") + std::string(type_name(spec)) +
                                 "' has no implementation on the " + backend_name(backend) +
                                 " backend in this build");
}

std::unique_ptr<SgdUpdate> make_sgd_update(Backend backend, const LayerOptions& /*options*/) {
  if (backend == Backend::Cpu) return std::make_unique<cpu::SgdUpdateCpu>();
  throw runtime::InvalidArgument(std::string("no SGD update on the ") + backend_name(backend) +
                                 " backend in this build");
}

}  // namespace vdnn::layers
