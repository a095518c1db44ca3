// Row-strided views on the CPU backend (Note [Dense block storage]): the batch norms (batchnorm2d,
// batchnorm2d_relu with and without the residual, batchnorm2d_silu) reading x as a channel prefix
// of a wider map whose other channels are NaN, bit for bit as on a packed copy of x, in training,
// recompute and inference forwards and backward, F32, F64 and BF16 (emulated); and concat writing a
// row-strided output with its first input already in place (never written: the pages under it are
// read-only) and a row-strided input copied row by row.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "runtime/BFloat16.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::BFloat16;
using runtime::Shape;
using test::Aligned;
using test::batch_norm_spec;
using test::BatchNormKind;

// x's shape and the channels of the map it is a prefix of: row strides of 96 and 144 elements,
// multiples of 8 as the dense block storage's, so that x's planes keep their alignment to Eigen's
// vectors.
struct PrefixCase {
  Shape x;
  std::int64_t wide_channels;
};
const PrefixCase kPrefixCases[] = {{Shape::nchw(3, 4, 4, 4), 6}, {Shape::nchw(2, 8, 3, 3), 16}};

// Feature maps of T, parameters of Param<T>: F32 beside bf16 maps (Note [Precision]).
template <typename T>
using Param = std::conditional_t<std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
T value_of(double v) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return runtime::to_bfloat16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
std::vector<T> filled(std::int64_t count, double v) {
  return std::vector<T>(static_cast<std::size_t>(count), value_of<T>(v));
}

template <typename T>
T nan_value() {
  return value_of<T>(std::numeric_limits<double>::quiet_NaN());
}

template <typename T>
std::vector<T> nans(std::int64_t count) {
  return std::vector<T>(static_cast<std::size_t>(count), nan_value<T>());
}

template <typename T>
std::vector<T> draw(std::mt19937_64& rng, std::int64_t count, double scale, double offset) {
  std::vector<T> v;
  for (const double d : test::random_values(count, rng))
    v.push_back(value_of<T>(d * scale + offset));
  return v;
}

// What every run of one kind reads: the same values for the packed and the strided x.
template <typename T>
struct Inputs {
  Inputs(const Shape& shape, std::uint64_t seed) : Inputs(shape, std::mt19937_64(seed)) {}
  Inputs(const Shape& shape, std::mt19937_64 rng)
      : x(draw<T>(rng, shape.numel(), 1.0, 1.5)),
        r(draw<T>(rng, shape.numel(), 1.0, 0.0)),
        dy(draw<T>(rng, shape.numel(), 1.0, 0.0)),
        weight(draw<Param<T>>(rng, shape.c(), 3.0, 0.0)),
        bias(draw<Param<T>>(rng, shape.c(), 1.0, 0.0)) {}
  std::vector<T> x, r, dy;
  std::vector<Param<T>> weight, bias;
};

// Everything a layer's steps produced.
template <typename T>
struct Results {
  std::vector<T> y, y_recomputed, dx, dr, y_inference, dx_inference;
  std::vector<Param<T>> dweight, dbias, running_mean, running_var;
};

// A training forward, its recompute, a backward, then an inference forward and its backward, of
// a fresh layer of `kind` reading x through `x_view`.
template <typename T>
Results<T> run_steps(BatchNormKind kind, const Shape& shape, const Inputs<T>& in,
                     const TensorView& x_view) {
  LayerOptions options;
  options.dtype = runtime::dtype_of<T>();
  const bool residual = kind == BatchNormKind::AddRelu;
  const std::vector<Shape> shapes =
      residual ? std::vector<Shape>{shape, shape} : std::vector{shape};
  const auto layer = make_layer(Backend::Cpu, batch_norm_spec(kind), shapes, options);
  const Shape channels{shape.c()};
  using P = Param<T>;
  Aligned<T> r(in.r), dy(in.dy);
  Aligned<P> weight(in.weight), bias(in.bias);
  Aligned<P> running_mean(filled<P>(shape.c(), 0.0)), running_var(filled<P>(shape.c(), 1.0));
  Aligned<T> y(nans<T>(shape.numel())), dx(nans<T>(shape.numel())), dr(nans<T>(shape.numel()));
  Aligned<P> dweight(nans<P>(shape.c())), dbias(nans<P>(shape.c()));
  const std::int64_t workspace_floats =
      static_cast<std::int64_t>(layer->workspace().backward / sizeof(float));
  Aligned<float> workspace(nans<float>(workspace_floats));
  Results<T> out;

  ForwardArgs f;
  f.inputs = {x_view};
  if (residual) f.inputs.push_back(r.view(shape));
  f.params = {weight.view(channels), bias.view(channels), running_mean.view(channels),
              running_var.view(channels)};
  f.output = y.view(shape);
  BackwardArgs b;
  b.inputs = f.inputs;
  b.output = f.output;
  b.params = f.params;
  b.grad_output = dy.view(shape);
  b.grad_inputs = {GradTarget{dx.view(shape), false}};
  if (residual) b.grad_inputs.push_back(GradTarget{dr.view(shape), false});
  b.grad_params = {dweight.view(channels), dbias.view(channels)};
  b.workspace = workspace.view(Shape{workspace_floats});

  layer->forward(f);
  out.y = y.values();
  out.running_mean = running_mean.values();
  out.running_var = running_var.values();
  f.recompute = true;
  layer->forward(f);
  out.y_recomputed = y.values();
  layer->backward(b);
  out.dx = dx.values();
  out.dr = dr.values();
  out.dweight = dweight.values();
  out.dbias = dbias.values();
  f.training = false;
  f.recompute = false;
  layer->forward(f);
  out.y_inference = y.values();
  layer->backward(b);
  out.dx_inference = dx.values();
  return out;
}

// Bit for bit (a NaN where the other has a number, or another NaN payload, differs too).
template <typename T>
void expect_bitwise(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)), 0) << what;
}

template <typename T>
void expect_prefix_views_read_as_packed() {
  for (const PrefixCase& c : kPrefixCases) {
    for (const BatchNormKind kind : test::kBatchNormKinds) {
      SCOPED_TRACE(std::string(type_name(batch_norm_spec(kind))) + " " + c.x.to_string());
      const Inputs<T> in(c.x, 5);
      Aligned<T> packed(in.x);
      Aligned<T> wide(test::widened(in.x, c.x, c.wide_channels, nan_value<T>()));
      TensorView strided = wide.view(c.x);
      strided.row_stride = c.wide_channels * c.x.h() * c.x.w();
      const Results<T> want = run_steps(kind, c.x, in, packed.view(c.x));
      const Results<T> got = run_steps(kind, c.x, in, strided);
      expect_bitwise(got.y, want.y, "training y");
      expect_bitwise(got.running_mean, want.running_mean, "running mean");
      expect_bitwise(got.running_var, want.running_var, "running var");
      expect_bitwise(got.y_recomputed, want.y_recomputed, "recomputed y");
      expect_bitwise(got.dx, want.dx, "dx");
      expect_bitwise(got.dr, want.dr, "dr");
      expect_bitwise(got.dweight, want.dweight, "dweight");
      expect_bitwise(got.dbias, want.dbias, "dbias");
      expect_bitwise(got.y_inference, want.y_inference, "inference y");
      expect_bitwise(got.dx_inference, want.dx_inference, "inference dx");
    }
  }
}

TEST(RowStridedViewsCpu, BatchNormsReadAPrefixViewAsAPackedCopyF32) {
  expect_prefix_views_read_as_packed<float>();
}

TEST(RowStridedViewsCpu, BatchNormsReadAPrefixViewAsAPackedCopyF64) {
  expect_prefix_views_read_as_packed<double>();
}

// BF16 through Bf16EmulationCpu, which widens the strided x row by row for its F32 layer.
TEST(RowStridedViewsCpu, BatchNormsReadAPrefixViewAsAPackedCopyBf16) {
  expect_prefix_views_read_as_packed<BFloat16>();
}

// Page-aligned memory whose pages can be made read-only; all writable again when freed.
class Pages {
 public:
  explicit Pages(std::size_t count)
      : page_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))),
        count_(count),
        data_(std::aligned_alloc(page_, page_ * count)) {}
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  ~Pages() {
    mprotect(data_, page_ * count_, PROT_READ | PROT_WRITE);
    std::free(data_);
  }
  std::byte* page(std::size_t i) const { return static_cast<std::byte*>(data_) + i * page_; }
  std::size_t page_bytes() const { return page_; }
  void read_only(std::size_t i) const { ASSERT_EQ(mprotect(page(i), page_, PROT_READ), 0); }

 private:
  std::size_t page_;
  std::size_t count_;
  void* data_;
};

// concat(a, b) into a row-strided output (a block buffer of 2 pages per sample) whose rows hold a
// in place (its samples at the end of read-only pages: any write there kills the process), with b
// a row-strided view of another map: the output rows are a's and b's, the buffer past them keeps
// its values.
TEST(RowStridedViewsCpu, ConcatLeavesAnInPlaceInputAndCopiesAStridedOne) {
  const Shape a_shape = Shape::nchw(3, 4, 2, 2);  // 16 floats (64 bytes) of each sample
  const Shape b_shape = Shape::nchw(3, 5, 2, 2);
  const Shape out_shape = Shape::nchw(3, 9, 2, 2);
  const std::int64_t a_row = a_shape.sample_numel();
  const std::int64_t b_row = b_shape.sample_numel();
  Pages pages(2 * static_cast<std::size_t>(a_shape.n()));
  const auto pitch = static_cast<std::int64_t>(2 * pages.page_bytes() / sizeof(float));
  auto* out = reinterpret_cast<float*>(pages.page(1)) - a_row;  // a's samples end on pages 0, 2..
  const std::size_t buffer_floats = static_cast<std::size_t>(pitch * a_shape.n());
  std::fill_n(reinterpret_cast<float*>(pages.page(0)), buffer_floats, -7.0f);
  std::mt19937_64 rng(3);
  const std::vector<double> a = test::random_values(a_shape.numel(), rng);
  const std::vector<double> b = test::random_values(b_shape.numel(), rng);
  std::vector<float> b_source(static_cast<std::size_t>(b_shape.n() * 2 * b_row), 42.0f);
  for (std::int64_t n = 0; n < a_shape.n(); ++n) {
    for (std::int64_t i = 0; i < a_row; ++i) {
      out[n * pitch + i] = static_cast<float>(a[n * a_row + i]);
    }
    for (std::int64_t i = 0; i < b_row; ++i) {
      b_source[static_cast<std::size_t>(n * 2 * b_row + i)] = static_cast<float>(b[n * b_row + i]);
    }
  }
  for (std::int64_t n = 0; n < a_shape.n(); ++n) pages.read_only(2 * static_cast<std::size_t>(n));

  const auto layer = make_layer(Backend::Cpu, ConcatSpec{}, {a_shape, b_shape}, LayerOptions{});
  ForwardArgs f;
  f.inputs = {
      TensorView{out, a_shape, runtime::DType::F32, runtime::Layout::Nchw, pitch},
      TensorView{b_source.data(), b_shape, runtime::DType::F32, runtime::Layout::Nchw, 2 * b_row}};
  f.output = TensorView{out, out_shape, runtime::DType::F32, runtime::Layout::Nchw, pitch};
  ASSERT_EXIT(
      {
        layer->forward(f);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "")
      << "concat wrote over its in-place input";
  layer->forward(f);
  for (std::int64_t n = 0; n < a_shape.n(); ++n) {
    SCOPED_TRACE("sample " + std::to_string(n));
    const float* row = out + n * pitch;
    for (std::int64_t i = 0; i < a_row; ++i) {
      ASSERT_EQ(row[i], static_cast<float>(a[n * a_row + i]));
    }
    for (std::int64_t i = 0; i < b_row; ++i) {
      ASSERT_EQ(row[a_row + i], static_cast<float>(b[n * b_row + i]));
    }
    ASSERT_EQ(row[a_row + b_row], -7.0f);  // the block buffer past the output's row
  }
}

}  // namespace
}  // namespace vdnn::layers::cpu
