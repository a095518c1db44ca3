// Finite-difference gradient check harness: owns every tensor one F64 CPU layer needs, runs
// forward and backward on them, and compares backward with central differences of the forward.
#include "layers/cpu/GradCheck.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>

#include "layers/Layer.hpp"
#include "layers/Registry.hpp"

namespace vdnn::test {
namespace {

using layers::ParamKind;
using runtime::DType;
using runtime::Shape;
using runtime::TensorView;

constexpr double kStep = 1e-5;        // far below the spacing of input values (4 / numel)
constexpr double kErrorFloor = 1e-2;  // gradients smaller than this are compared absolutely
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct HostTensor {
  std::string name;
  Shape shape;
  std::vector<double> values;

  HostTensor(std::string tensor_name, const Shape& tensor_shape, double fill)
      : name(std::move(tensor_name)),
        shape(tensor_shape),
        values(static_cast<std::size_t>(tensor_shape.numel()), fill) {}
  TensorView view() { return {values.data(), shape, DType::F64}; }
};

std::vector<TensorView> views(std::vector<HostTensor>& tensors) {
  std::vector<TensorView> result;
  for (HostTensor& t : tensors) result.push_back(t.view());
  return result;
}

// std::mt19937_64 is fully specified, unlike the standard distributions, so draws are the same
// on every platform.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(engine_() >> 11) * 0x1.0p-53;
  }
  std::uint64_t below(std::uint64_t bound) { return engine_() % bound; }

 private:
  std::mt19937_64 engine_;
};

// Distinct values 4 / n apart in (-2, 2), none closer than a quarter spacing to 0, shuffled.
void fill_distinct(std::vector<double>& values, Random& random) {
  const double spacing = 4.0 / static_cast<double>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = (static_cast<double>(i) + 0.25) * spacing - 2.0;
  }
  for (std::size_t i = values.size() - 1; i > 0; --i) {
    std::swap(values[i], values[random.below(i + 1)]);
  }
}

// F64 layers drawing with `seed`.
layers::LayerOptions f64_options(std::uint64_t seed) {
  layers::LayerOptions options;
  options.dtype = DType::F64;
  options.seed = seed;
  return options;
}

// One layer with every tensor it reads or writes, all in double on the host.
class Harness {
 public:
  explicit Harness(const GradCheckCase& c)
      : case_(c),
        layer_(
            layers::make_layer(layers::Backend::Cpu, c.spec, c.input_shapes, f64_options(c.seed))),
        param_specs_(layers::param_specs(c.spec, c.input_shapes)),
        output_("output", layer_->output_shape(), 0.0),
        weights_("R", layer_->output_shape(), c.output_weight.value_or(0.0)),
        workspace_((layer_->workspace_bytes() + sizeof(double) - 1) / sizeof(double)) {
    Random random(c.seed);
    for (std::size_t k = 0; k < c.input_shapes.size(); ++k) {
      inputs_.emplace_back("input " + std::to_string(k), c.input_shapes[k], 0.0);
      fill_distinct(inputs_.back().values, random);
    }
    for (const layers::ParamSpec& p : param_specs_) {
      params_.emplace_back(p.name, p.shape, 0.0);
      const bool trainable = p.kind == ParamKind::Trainable;
      for (double& v : params_.back().values) {
        // Buffers stay positive so that a running variance is valid.
        v = trainable ? random.uniform(-1.0, 1.0) : random.uniform(0.5, 1.5);
      }
      if (trainable) ++trainable_count_;
    }
    initial_params_ = params_;
    if (!c.output_weight) {
      for (double& v : weights_.values) v = random.uniform(-1.0, 1.0);
    }
    const Shape& x = c.input_shapes.front();
    for (std::int64_t n = 0; n < x.n(); ++n) {
      const auto label = random.below(static_cast<std::uint64_t>(x.sample_numel()));
      labels_.push_back(static_cast<std::int32_t>(label));
    }
  }

  /// Inputs, then trainable parameters: the tensors gradients are checked for.
  std::vector<HostTensor*> differentiable() {
    std::vector<HostTensor*> result;
    for (HostTensor& t : inputs_) result.push_back(&t);
    for (std::size_t j = 0; j < trainable_count_; ++j) result.push_back(&params_[j]);
    return result;
  }

  /// Gradient tensors in differentiable() order: input gradients filled with `input_fill`,
  /// parameter gradients with NaN.
  std::vector<HostTensor> gradients(double input_fill) const {
    std::vector<HostTensor> result;
    for (const HostTensor& t : inputs_) result.emplace_back("d" + t.name, t.shape, input_fill);
    for (std::size_t j = 0; j < trainable_count_; ++j) {
      result.emplace_back("d" + params_[j].name, params_[j].shape, kNaN);
    }
    return result;
  }

  /// Forward at the current values; returns L. Buffers are reset first because a training
  /// forward updates them.
  double objective() {
    for (std::size_t j = trainable_count_; j < params_.size(); ++j) {
      params_[j].values = initial_params_[j].values;
    }
    layers::ForwardArgs args;
    args.inputs = views(inputs_);
    args.params = views(params_);
    args.output = output_.view();
    args.workspace = workspace();
    args.training = case_.training;
    args.step = case_.step;
    args.labels = labels_.data();
    layer_->forward(args);
    double sum = 0.0;
    for (std::size_t i = 0; i < output_.values.size(); ++i) {
      sum += output_.values[i] * weights_.values[i];
    }
    return sum;
  }

  /// Forward, then backward into `grads` (as made by gradients()) with only the views
  /// backward_needs() declares.
  void backward(std::vector<HostTensor>& grads, bool accumulate) {
    objective();
    const layers::BackwardNeeds needs = layers::backward_needs(case_.spec);
    layers::BackwardArgs args;
    args.inputs = needs.inputs ? views(inputs_) : std::vector<TensorView>(inputs_.size());
    if (needs.output) args.output = output_.view();
    // A copy: backward may overwrite its output gradient (BackwardArgs::grad_output).
    HostTensor grad_output = weights_;
    args.grad_output = grad_output.view();
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      args.grad_inputs.push_back({grads[k].view(), accumulate});
    }
    args.params = views(params_);
    for (std::size_t j = 0; j < trainable_count_; ++j) {
      args.grad_params.push_back(grads[inputs_.size() + j].view());
    }
    args.workspace = workspace();
    args.step = case_.step;
    args.labels = labels_.data();
    layer_->backward(args);
  }

  std::size_t input_count() const { return inputs_.size(); }

 private:
  TensorView workspace() {
    if (workspace_.empty()) return {};
    return {workspace_.data(), Shape{static_cast<std::int64_t>(workspace_.size())}, DType::F64};
  }

  GradCheckCase case_;
  std::unique_ptr<layers::Layer> layer_;
  std::vector<layers::ParamSpec> param_specs_;
  std::size_t trainable_count_ = 0;
  std::vector<HostTensor> inputs_;
  std::vector<HostTensor> params_;
  std::vector<HostTensor> initial_params_;
  HostTensor output_;
  HostTensor weights_;
  std::vector<double> workspace_;
  std::vector<std::int32_t> labels_;
};

// The element with the largest error so far; a NaN error (an unwritten gradient) ranks highest.
struct WorstElement {
  std::string tensor;
  std::size_t index = 0;
  double analytic = 0.0;
  double expected = 0.0;
  double error = -1.0;

  void update(const std::string& name, std::size_t i, double got, double want, double err) {
    if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
    if (err <= error) return;
    *this = {name, i, got, want, err};
  }
  std::string describe(const GradCheckCase& c) const {
    std::ostringstream out;
    out.precision(12);
    out << layers::type_name(c.spec) << ": " << tensor << "[" << index << "] is " << analytic
        << ", expected " << expected << " (error " << error << ")";
    return out.str();
  }
};

}  // namespace

::testing::AssertionResult gradients_match(const GradCheckCase& c, double tolerance) {
  Harness harness(c);
  std::vector<HostTensor> grads = harness.gradients(kNaN);
  harness.backward(grads, /*accumulate=*/false);
  const std::vector<HostTensor*> values = harness.differentiable();
  WorstElement worst;
  for (std::size_t t = 0; t < values.size(); ++t) {
    std::vector<double>& v = values[t]->values;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double saved = v[i];
      v[i] = saved + kStep;
      const double plus = harness.objective();
      v[i] = saved - kStep;
      const double minus = harness.objective();
      v[i] = saved;
      const double numeric = (plus - minus) / (2.0 * kStep);
      const double analytic = grads[t].values[i];
      const double scale = std::max({std::abs(analytic), std::abs(numeric), kErrorFloor});
      worst.update(grads[t].name, i, analytic, numeric, std::abs(analytic - numeric) / scale);
    }
  }
  if (worst.error <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << worst.describe(c) << " exceeds tolerance " << tolerance;
}

::testing::AssertionResult accumulate_adds(const GradCheckCase& c) {
  Harness harness(c);
  std::vector<HostTensor> overwritten = harness.gradients(kNaN);
  harness.backward(overwritten, /*accumulate=*/false);
  std::vector<HostTensor> accumulated = harness.gradients(0.0);
  Random random(c.seed + 1);
  for (std::size_t k = 0; k < harness.input_count(); ++k) {
    for (double& v : accumulated[k].values) v = random.uniform(-1.0, 1.0);
  }
  const std::vector<HostTensor> before = accumulated;
  harness.backward(accumulated, /*accumulate=*/true);
  WorstElement worst;
  for (std::size_t k = 0; k < harness.input_count(); ++k) {
    for (std::size_t i = 0; i < before[k].values.size(); ++i) {
      const double expected = before[k].values[i] + overwritten[k].values[i];
      const double got = accumulated[k].values[i];
      worst.update(accumulated[k].name, i, got, expected,
                   std::abs(got - expected) / std::max(1.0, std::abs(expected)));
    }
  }
  if (worst.error <= 1e-12) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << worst.describe(c) << " after accumulating";
}

}  // namespace vdnn::test
