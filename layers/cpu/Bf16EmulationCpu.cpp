// bf16 storage emulated around an FP32 CPU layer: views widened to float before, results rounded
// after.
#include "layers/cpu/Bf16EmulationCpu.hpp"

#include <cstddef>
#include <cstdlib>
#include <deque>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::BFloat16;

// Eigen's vectorized loops start where their data's alignment lets them, so the same values at
// differently aligned addresses can be summed in another order: every scratch copy starts on a
// cache line, as the executor's pool allocations do, for results that never depend on the heap.
constexpr std::size_t kScratchAlignment = 64;

// A float array on a cache-line boundary, owned.
class Scratch {
 public:
  explicit Scratch(std::size_t count)
      : count_(count),
        data_(static_cast<float*>(
            std::aligned_alloc(kScratchAlignment, (count * sizeof(float) + kScratchAlignment - 1) /
                                                      kScratchAlignment * kScratchAlignment))) {
    if (count_ > 0 && data_ == nullptr) throw std::bad_alloc();
  }
  float* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return count_; }
  float& operator[](std::size_t i) const noexcept { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(float* p) const noexcept { std::free(p); }
  };
  std::size_t count_;
  std::unique_ptr<float, Free> data_;
};

// Calls fn(at, packed_at, count) for each run of `count` elements of `view` at `at` that its packed
// copy holds at `packed_at`: the whole view when packed, else each row (a row-strided view, Note
// [Dense block storage]).
template <typename Fn>
void for_each_run(const TensorView& view, Fn&& fn) {
  if (view.packed()) {
    fn(std::size_t{0}, std::size_t{0}, static_cast<std::size_t>(view.numel()));
    return;
  }
  const auto row = static_cast<std::size_t>(view.row_elements());
  const auto pitch = static_cast<std::size_t>(view.row_pitch());
  for (std::size_t r = 0; r < static_cast<std::size_t>(view.rows()); ++r) {
    fn(r * pitch, r * row, row);
  }
}

// Float copies of the BF16 views a call gets (packed), and where the inner layer's results go back.
class Widened {
 public:
  // `view` as the inner layer reads it: BF16 widened to a packed float copy, anything else as it
  // is.
  TensorView read(const TensorView& view) {
    if (view.empty() || view.dtype != DType::BF16) return view;
    Scratch& copy = scratch(view);
    const BFloat16* values = view.as<BFloat16>();
    for_each_run(view, [&](std::size_t at, std::size_t packed_at, std::size_t count) {
      runtime::to_float(values + at, copy.data() + packed_at, count);
    });
    return {copy.data(), view.shape, DType::F32, view.layout};
  }
  // A float view the inner layer writes in place of `view`; finish() rounds it into `view`.
  TensorView write(const TensorView& view, bool accumulate) {
    if (view.empty() || view.dtype != DType::BF16) return view;
    Scratch& copy = scratch(view);
    results_.push_back({view, &copy, accumulate});
    return {copy.data(), view.shape, DType::F32, view.layout};
  }
  // A parameter rounded to bf16, as the CUDA layer's weight copy.
  TensorView rounded(const TensorView& view) {
    Scratch& copy = scratch(view);
    const float* values = view.as<float>();
    for (std::size_t i = 0; i < copy.size(); ++i) copy[i] = runtime::round_to_bfloat16(values[i]);
    return {copy.data(), view.shape, DType::F32, view.layout};
  }
  // Every written float view into its BF16 view, rounded once.
  void finish() const {
    for (const Result& r : results_) {
      BFloat16* out = r.target.as<BFloat16>();
      for_each_run(r.target, [&](std::size_t at, std::size_t packed_at, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
          const float v = (*r.values)[packed_at + i];
          BFloat16& o = out[at + i];
          o = runtime::to_bfloat16(r.accumulate ? runtime::to_float(o) + v : v);
        }
      });
    }
  }

 private:
  struct Result {
    TensorView target;
    const Scratch* values;
    bool accumulate;
  };
  Scratch& scratch(const TensorView& view) {
    copies_.emplace_back(static_cast<std::size_t>(view.numel()));
    return copies_.back();
  }

  std::deque<Scratch> copies_;  // a deque: results_ points into it as it grows
  std::vector<Result> results_;
};

std::vector<TensorView> params_for_inner(const LayerSpec& spec,
                                         const std::vector<TensorView>& params, Widened& widened) {
  std::vector<TensorView> out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const bool rounds = param_read_in_precision(spec, i) && params[i].dtype != DType::BF16;
    out.push_back(rounds ? widened.rounded(params[i]) : widened.read(params[i]));
  }
  return out;
}

}  // namespace

Bf16EmulationCpu::Bf16EmulationCpu(std::unique_ptr<Layer> inner)
    : Layer(inner->spec(), inner->input_shapes(), DType::BF16, inner->layout(),
            inner->input_layout()),
      inner_(std::move(inner)) {
  VDNN_EXPECTS(inner_->dtype() == DType::F32, "bf16 emulation wraps an F32 CPU layer");
}

void Bf16EmulationCpu::forward(const ForwardArgs& args) {
  Widened widened;
  ForwardArgs inner = args;
  for (TensorView& in : inner.inputs) in = widened.read(in);
  inner.params = params_for_inner(spec(), args.params, widened);
  inner.output = widened.write(args.output, false);
  inner_->forward(inner);
  widened.finish();
}

void Bf16EmulationCpu::backward(const BackwardArgs& args) {
  Widened widened;
  BackwardArgs inner = args;
  for (TensorView& in : inner.inputs) in = widened.read(in);
  inner.output = widened.read(args.output);
  inner.grad_output = widened.read(args.grad_output);
  for (std::size_t i = 0; i < inner.grad_inputs.size(); ++i) {
    const GradTarget& outer = args.grad_inputs[i];
    if (outer.tensor.empty() || outer.tensor.dtype != DType::BF16) continue;
    // The inner layer writes a fresh float gradient; finish() adds it to the old bf16 value.
    inner.grad_inputs[i] = {widened.write(outer.tensor, outer.accumulate), false};
  }
  inner.params = params_for_inner(spec(), args.params, widened);
  inner_->backward(inner);
  widened.finish();
}

}  // namespace vdnn::layers::cpu
