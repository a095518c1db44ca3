// bench_conv_cpu: Conv2dCpu forward + backward (data and filter) GFLOP/s on ResNet-50-like layers,
// as a fraction of the GFLOP/s of one large float Eigen GEMM built with the same flags.
// Usage: bench_conv_cpu [--batch N] [--reps R] [--json FILE]
#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "layers/Registry.hpp"

namespace {

using vdnn::layers::Backend;
using vdnn::layers::BackwardArgs;
using vdnn::layers::Conv2dSpec;
using vdnn::layers::ForwardArgs;
using vdnn::layers::GradTarget;
using vdnn::layers::LayerOptions;
using vdnn::runtime::DType;
using vdnn::runtime::Shape;
using vdnn::runtime::TensorView;

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Options {
  std::int64_t batch = 4;
  int reps = 3;
  std::string json_path;
};

// A ResNet-50 convolution: `channels` x `size` x `size` in, padding kernel / 2.
struct ConvShape {
  const char* name;
  std::int64_t channels;
  std::int64_t size;
  std::int64_t out_channels;
  std::int64_t kernel;
  std::int64_t stride;
};

struct ConvResult {
  std::string name;
  double gflop = 0.0;  // forward + backward data + backward filter
  double forward_s = 0.0;
  double backward_s = 0.0;
  double gflops() const { return gflop / (forward_s + backward_s); }
};

// Best wall time of `reps` runs after one warm-up run; the best is the least disturbed by other
// processes on the machine.
template <typename F>
double best_seconds(int reps, F&& run) {
  run();
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  return best;
}

std::vector<float> random_floats(std::int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& v : values) v = dist(rng);
  return values;
}

TensorView view_of(std::vector<float>& values, const Shape& shape) {
  return TensorView{values.empty() ? nullptr : values.data(), shape, DType::F32};
}

// GFLOP/s of C = A B with A m x k and B k x n, row-major as the convolution's maps are.
double gemm_gflops(std::int64_t m, std::int64_t n, std::int64_t k, int reps) {
  std::mt19937 rng(1);
  std::vector<float> a = random_floats(m * k, rng), b = random_floats(k * n, rng);
  std::vector<float> c(static_cast<std::size_t>(m * n));
  Eigen::Map<Matrix> c_map(c.data(), m, n);
  const Eigen::Map<const Matrix> a_map(a.data(), m, k), b_map(b.data(), k, n);
  const double seconds = best_seconds(reps, [&] { c_map.noalias() = a_map * b_map; });
  return 2.0 * static_cast<double>(m * n * k) / seconds * 1e-9;
}

ConvResult bench_conv(const ConvShape& s, std::int64_t batch, int reps) {
  Conv2dSpec spec;
  spec.out_channels = s.out_channels;
  spec.kernel = {s.kernel, s.kernel};
  spec.stride = {s.stride, s.stride};
  spec.padding = {s.kernel / 2, s.kernel / 2};
  const Shape in_shape = Shape::nchw(batch, s.channels, s.size, s.size);
  const Shape w_shape{s.out_channels, s.channels, s.kernel, s.kernel};
  const auto layer = vdnn::layers::make_layer(Backend::Cpu, spec, {in_shape}, LayerOptions{});
  const Shape out_shape = layer->output_shape();

  std::mt19937 rng(2);
  std::vector<float> x = random_floats(in_shape.numel(), rng);
  std::vector<float> weight = random_floats(w_shape.numel(), rng);
  std::vector<float> dy = random_floats(out_shape.numel(), rng);
  std::vector<float> y(static_cast<std::size_t>(out_shape.numel()));
  std::vector<float> dx(x.size()), dweight(weight.size());
  std::vector<float> workspace(layer->workspace_bytes() / sizeof(float));
  const TensorView workspace_view =
      view_of(workspace, Shape{static_cast<std::int64_t>(workspace.size())});

  ForwardArgs fwd;
  fwd.inputs = {view_of(x, in_shape)};
  fwd.params = {view_of(weight, w_shape)};
  fwd.output = view_of(y, out_shape);
  fwd.workspace = workspace_view;
  BackwardArgs bwd;
  bwd.inputs = fwd.inputs;
  bwd.grad_output = view_of(dy, out_shape);
  bwd.grad_inputs = {GradTarget{view_of(dx, in_shape), false}};
  bwd.params = fwd.params;
  bwd.grad_params = {view_of(dweight, w_shape)};
  bwd.workspace = workspace_view;

  ConvResult result;
  result.name = s.name;
  const double macs = static_cast<double>(out_shape.numel() * s.channels * s.kernel * s.kernel);
  result.gflop = 3.0 * 2.0 * macs * 1e-9;
  result.forward_s = best_seconds(reps, [&] { layer->forward(fwd); });
  result.backward_s = best_seconds(reps, [&] { layer->backward(bwd); });
  return result;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--batch") == 0 && has_value) {
      options.batch = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--reps") == 0 && has_value) {
      options.reps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--json") == 0 && has_value) {
      options.json_path = argv[++i];
    } else {
      throw std::invalid_argument(std::string("unknown or incomplete argument '") + argv[i] +
                                  "'; usage: bench_conv_cpu [--batch N] [--reps R] [--json FILE]");
    }
  }
  if (options.batch <= 0 || options.reps <= 0) {
    throw std::invalid_argument("--batch and --reps must be positive");
  }
  return options;
}

void write_json(const std::string& path, const Options& options, double gemm,
                const std::vector<ConvResult>& results, double overall) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) throw std::runtime_error("cannot write " + path);
  std::fprintf(file, "{\"batch\": %lld, \"reps\": %d, \"gemm_gflops\": %.3f, \"layers\": [",
               static_cast<long long>(options.batch), options.reps, gemm);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ConvResult& r = results[i];
    std::fprintf(file,
                 "%s\n  {\"name\": \"%s\", \"gflop\": %.6f, \"forward_s\": %.6f, "
                 "\"backward_s\": %.6f, \"gflops\": %.3f, \"ratio\": %.4f}",
                 i == 0 ? "" : ",", r.name.c_str(), r.gflop, r.forward_s, r.backward_s, r.gflops(),
                 r.gflops() / gemm);
  }
  std::fprintf(file, "\n], \"overall_ratio\": %.4f}\n", overall);
  std::fclose(file);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(argc, argv);
    // A ResNet-50-sized im2col GEMM: 256 filters x (256 channels x 3x3 taps) x one 56x56 map.
    const std::int64_t gemm_m = 256, gemm_n = 3136, gemm_k = 2304;
    const double gemm = gemm_gflops(gemm_m, gemm_n, gemm_k, options.reps);
    std::printf("Eigen GEMM float %lldx%lldx%lld: %.2f GFLOP/s (Eigen SIMD: %s, threads: %d)\n\n",
                static_cast<long long>(gemm_m), static_cast<long long>(gemm_n),
                static_cast<long long>(gemm_k), gemm, Eigen::SimdInstructionSetsInUse(),
                Eigen::nbThreads());

    const std::vector<ConvShape> shapes = {
        {"conv2_3x3 64->64 56x56", 64, 56, 64, 3, 1},
        {"conv3_3x3 128->128 28x28", 128, 28, 128, 3, 1},
        {"conv4_3x3 256->256 14x14", 256, 14, 256, 3, 1},
        {"conv5_3x3 512->512 7x7", 512, 7, 512, 3, 1},
        {"conv2_1x1 64->256 56x56", 64, 56, 256, 1, 1},
        {"conv2_1x1 256->64 56x56", 256, 56, 64, 1, 1},
        {"conv3_1x1 512->128 28x28", 512, 28, 128, 1, 1},
        {"conv4_1x1 1024->256 14x14", 1024, 14, 256, 1, 1},
        {"down4_1x1/2 512->1024 28x28", 512, 28, 1024, 1, 2},
    };
    const std::string title = "layer (N=" + std::to_string(options.batch) + ")";
    std::printf("%-30s %9s %9s %9s %10s %9s\n", title.c_str(), "GFLOP", "fwd ms", "bwd ms",
                "GFLOP/s", "conv/GEMM");
    std::vector<ConvResult> results;
    double total_gflop = 0.0;
    double total_s = 0.0;
    for (const ConvShape& shape : shapes) {
      const ConvResult r = bench_conv(shape, options.batch, options.reps);
      std::printf("%-30s %9.3f %9.2f %9.2f %10.2f %9.2f\n", r.name.c_str(), r.gflop,
                  r.forward_s * 1e3, r.backward_s * 1e3, r.gflops(), r.gflops() / gemm);
      total_gflop += r.gflop;
      total_s += r.forward_s + r.backward_s;
      results.push_back(r);
    }
    const double overall = total_gflop / total_s / gemm;
    std::printf("\noverall conv fwd+bwd: %.2f GFLOP/s, conv/GEMM ratio %.2f (target >= 0.50)\n",
                total_gflop / total_s, overall);
    if (!options.json_path.empty()) write_json(options.json_path, options, gemm, results, overall);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_conv_cpu: %s\n", e.what());
    return 1;
  }
}
