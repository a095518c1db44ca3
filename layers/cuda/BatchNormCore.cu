// The host side of the CUDA batch norm: launch geometry, the dispatch to the kernel variants of
// BatchNormKernels.cuh (storage type, layout, vectors of 8 (bf16), 4 or 1, 32- or 64-bit indices,
// fused activation and residual), and the statistics rules the batch-norm layers share.
#include "layers/cuda/BatchNormCore.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>

#include "layers/cuda/BatchNormKernels.cuh"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

using bn::combine_blocks;
using bn::kCombineBlock;
using bn::kUnroll;
using bn::Map;
using bn::Mask;

// First-level reduction blocks. NCHW: several waves of blocks on an H200, at most
// kMaxPartsPerChannel per channel. NHWC: a block covers a row chunk of a 32-channel tile and writes
// one partial pair per channel, C * parts pairs in all; aiming at kTargetNhwcBlocks blocks (a few
// per SM, each with 16 KiB of loads in flight) bounds them near 32 * 1024 pairs (512 KiB).
constexpr std::int64_t kTargetReduceBlocks = 4096;
constexpr std::int64_t kMaxPartsPerChannel = 128;
constexpr std::int64_t kTargetNhwcBlocks = 1024;
constexpr std::int64_t kMaxNhwcParts = 512;

template <typename T>
struct Tag {
  using type = T;
};
template <Map kMap>
using MapConstant = std::integral_constant<Map, kMap>;
template <Mask kMask>
using MaskConstant = std::integral_constant<Mask, kMask>;
using Vec1 = std::integral_constant<int, 1>;
using Vec4 = std::integral_constant<int, 4>;
template <typename T>
using WideVec = std::integral_constant<int, kWideVec<T>>;  // 16 bytes: Vec4 for float, 8 for bf16

// Calls f(MaskConstant<mask>).
template <typename F>
void with_mask(Mask mask, F&& f) {
  switch (mask) {
    case Mask::Output:
      f(MaskConstant<Mask::Output>{});
      break;
    case Mask::Input:
      f(MaskConstant<Mask::Input>{});
      break;
    case Mask::Silu:
      f(MaskConstant<Mask::Silu>{});
      break;
    case Mask::Relu6:
      f(MaskConstant<Mask::Relu6>{});
      break;
    case Mask::Hardswish:
      f(MaskConstant<Mask::Hardswish>{});
      break;
    case Mask::None:
      f(MaskConstant<Mask::None>{});
      break;
  }
}

// The kernels' mask of `epilogue`: the ReLU's from y with the residual (whose backward reads y
// anyway), else from x renormalized.
Mask mask_of(Epilogue epilogue, bool residual) {
  switch (epilogue) {
    case Epilogue::Relu:
      return residual ? Mask::Output : Mask::Input;
    case Epilogue::Silu:
      return Mask::Silu;
    case Epilogue::Relu6:
      return Mask::Relu6;
    case Epilogue::Hardswish:
      return Mask::Hardswish;
    case Epilogue::None:
      break;
  }
  return Mask::None;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The elements of a row of a map of `shape` in `layout`: a sample (NCHW) or a pixel (NHWC), as
// TensorView::row_elements.
std::int64_t row_elements(const Shape& shape, Layout layout) {
  return layout == Layout::Nchw ? shape.sample_numel() : shape.c();
}

// The elements a row-strided x's rows and pitch must be multiples of, and the alignment of its
// data: whole 16-byte vectors of either dtype in every row, so that each vector path reads it
// (the dense block storage's views satisfy this, Note [Dense block storage]).
constexpr std::int64_t kStridedRowMultiple = 8;

// Calls f(Tag<Index>): 32-bit indices when every index and the small offsets added to it fit.
template <typename F>
void with_index(const Shape& shape, F&& f) {
  if (shape.numel() <= std::numeric_limits<std::int32_t>::max()) {
    f(Tag<std::uint32_t>{});
  } else {
    f(Tag<std::uint64_t>{});
  }
}

// The elements a float4 of the reductions must not straddle: a plane (NCHW) or a row (NHWC).
std::int64_t reduction_inner(const Shape& shape, Layout layout) {
  return layout == Layout::Nchw ? shape.h() * shape.w() : shape.c();
}

// Blocks per channel (NCHW) or row chunks (NHWC) of the first-level reduction, fixed at
// construction so that the summation order (and so the result) never changes between steps.
std::int64_t reduction_parts(const Shape& shape, Layout layout) {
  const std::int64_t vec = reduction_inner(shape, layout) % 4 == 0 ? 4 : 1;
  if (layout == Layout::Nchw) {
    const std::int64_t channels = std::max<std::int64_t>(shape.c(), 1);
    const std::int64_t channel_vecs = shape.n() * shape.h() * shape.w() / vec;
    const std::int64_t by_work = ceil_div(channel_vecs, kUnroll * kReduceBlock);
    const std::int64_t by_grid = ceil_div(kTargetReduceBlocks, channels);
    return std::max<std::int64_t>(1, std::min({by_work, by_grid, kMaxPartsPerChannel}));
  }
  const std::int64_t row_vecs = shape.c() / vec;
  const std::int64_t tile = vec == 4 ? bn::kRowTileVecs<4> : bn::kRowTileVecs<1>;
  const std::int64_t lanes = kReduceBlock / std::min(tile, row_vecs);
  const std::int64_t by_work = ceil_div(shape.n() * shape.h() * shape.w(), kUnroll * lanes);
  const std::int64_t by_grid = ceil_div(kTargetNhwcBlocks, ceil_div(row_vecs, tile));
  return std::max<std::int64_t>(1, std::min({by_work, by_grid, kMaxNhwcParts}));
}

template <int kVec>
unsigned elementwise_blocks(std::int64_t vecs) {
  return static_cast<unsigned>(ceil_div(vecs, bn::kElementwiseUnroll<kVec> * kBlockThreads));
}

// Calls f(MapConstant, vec, Tag<Index>, std::bool_constant<strided>) for an element-wise pass
// over `tensors` of T that reads the per-channel arrays `per_channel`, `strided` when x's rows are
// apart (x_pitch is not a row's elements): vectors of 4 whenever the element count and the tensors
// allow it; NHWC loads per-channel float4 too when C % 4 == 0 and those arrays are 16-byte aligned.
// Bf16 moves 16 bytes (8 elements) where a vector of 8 takes one channel (NCHW, H * W % 8 == 0) or
// 8 whole channels (NHWC, C % 8 == 0); elsewhere it takes F32's paths, with half the bytes. A
// strided x takes vectors only (its rows are whole ones, BatchNormCore::x_pitch), so that the
// packed passes alone have scalar variants.
template <typename T, typename F>
void dispatch_elementwise(const Shape& shape, Layout layout, std::int64_t x_pitch,
                          std::initializer_list<const void*> tensors,
                          std::initializer_list<const void*> per_channel, F&& f) {
  constexpr int kWide = kWideVec<T>;
  const bool vec4 = shape.numel() % 4 == 0 && aligned16(tensors);
  const bool strided = x_pitch != row_elements(shape, layout);
  VDNN_EXPECTS(
      vec4 || !strided,
      "batchnorm2d reads a row-strided x in vectors: every tensor must be 16-byte aligned");
  const auto run = [&](auto map, auto vec) {
    with_index(shape, [&](auto index) {
      if constexpr (decltype(vec)::value > 1) {
        if (strided) {
          f(map, vec, index, std::true_type{});
          return;
        }
      }
      f(map, vec, index, std::false_type{});
    });
  };
  if constexpr (kWide > 4) {
    // numel % kWide follows from H * W or C % kWide.
    if (vec4 && layout == Layout::Nchw && shape.h() * shape.w() % kWide == 0) {
      run(MapConstant<Map::PlaneVector>{}, WideVec<T>{});
      return;
    }
    if (vec4 && layout == Layout::Nhwc && shape.c() % kWide == 0 && aligned16(per_channel)) {
      run(MapConstant<Map::ChannelVector>{}, WideVec<T>{});
      return;
    }
  }
  if (layout == Layout::Nchw) {
    if (vec4 && shape.h() * shape.w() % 4 == 0) {
      run(MapConstant<Map::PlaneVector>{}, Vec4{});
    } else if (vec4) {
      run(MapConstant<Map::PlaneElement>{}, Vec4{});
    } else {
      run(MapConstant<Map::PlaneElement>{}, Vec1{});
    }
  } else if (vec4 && shape.c() % 4 == 0 && aligned16(per_channel)) {
    run(MapConstant<Map::ChannelVector>{}, Vec4{});
  } else if (vec4) {
    run(MapConstant<Map::ChannelElement>{}, Vec4{});
  } else {
    run(MapConstant<Map::ChannelElement>{}, Vec1{});
  }
}

template <Map kMap, int kVec, typename Index>
bn::ChannelMap<kMap, kVec, Index> channel_map(const Shape& shape) {
  const std::int64_t plane = shape.h() * shape.w();
  return {static_cast<Index>(kMap == Map::PlaneVector ? plane / kVec : plane),
          static_cast<Index>(kMap == Map::ChannelVector ? shape.c() / kVec : shape.c())};
}

template <bool kStrided, int kVec, typename Index>
bn::XRows<kStrided, Index> x_rows(const Shape& shape, Layout layout, std::int64_t x_pitch) {
  return {static_cast<Index>(row_elements(shape, layout) / kVec), x_pitch / kVec};
}

template <typename T, Mask kMask, bool kResidual>
void launch_normalize(cudaStream_t stream, const Shape& shape, Layout layout, const T* x,
                      std::int64_t x_pitch, const T* r, const float* mean, const float* scale,
                      const float* bias, T* y) {
  dispatch_elementwise<T>(shape, layout, x_pitch, {x, r, y}, {mean, scale, bias},
                          [&](auto map, auto vec, auto index, auto strided) {
                            constexpr Map kMap = decltype(map)::value;
                            constexpr int kVec = decltype(vec)::value;
                            using Index = typename decltype(index)::type;
                            constexpr bool kStrided = decltype(strided)::value;
                            const std::int64_t total = shape.numel() / kVec;
                            bn::normalize_kernel<T, kMask, kResidual, kMap, kVec, Index, kStrided>
                                <<<elementwise_blocks<kVec>(total), kBlockThreads, 0, stream>>>(
                                    x, r, mean, scale, bias, y, static_cast<Index>(total),
                                    channel_map<kMap, kVec, Index>(shape),
                                    x_rows<kStrided, kVec, Index>(shape, layout, x_pitch));
                            VDNN_CHECK_LAUNCH();
                          });
}

// The forward's element-wise pass: with the residual the ReLU's (Mask::Output), else `mask`'s
// activation (Mask::Output, which only the residual chain has, is never instantiated without it).
template <typename T>
void launch_forward(cudaStream_t stream, const Shape& shape, Layout layout, Mask mask, const T* x,
                    std::int64_t x_pitch, const T* r, const float* mean, const float* scale,
                    const float* bias, T* y) {
  if (r != nullptr) {
    launch_normalize<T, Mask::Output, true>(stream, shape, layout, x, x_pitch, r, mean, scale, bias,
                                            y);
    return;
  }
  with_mask(mask, [&](auto m) {
    constexpr Mask kMask = decltype(m)::value;
    if constexpr (kMask != Mask::Output) {
      launch_normalize<T, kMask, false>(stream, shape, layout, x, x_pitch, r, mean, scale, bias, y);
    }
  });
}

template <Mask kMask, bool kResidualGrad, typename T>
void launch_input_grad(cudaStream_t stream, const Shape& shape, Layout layout, std::int64_t x_pitch,
                       const bn::GradArgs<T>& a) {
  dispatch_elementwise<T>(
      shape, layout, x_pitch, {a.x, a.dy, a.y, a.dx, a.dr},
      {a.mean, a.scale, a.shift, a.coeff_a, a.coeff_b, a.coeff_k},
      [&](auto map, auto vec, auto index, auto strided) {
        constexpr Map kMap = decltype(map)::value;
        constexpr int kVec = decltype(vec)::value;
        using Index = typename decltype(index)::type;
        constexpr bool kStrided = decltype(strided)::value;
        const std::int64_t total = shape.numel() / kVec;
        bn::input_grad_kernel<T, kMask, kResidualGrad, kMap, kVec, Index, kStrided>
            <<<elementwise_blocks<kVec>(total), kBlockThreads, 0, stream>>>(
                a, static_cast<Index>(total), channel_map<kMap, kVec, Index>(shape),
                x_rows<kStrided, kVec, Index>(shape, layout, x_pitch));
        VDNN_CHECK_LAUNCH();
      });
}

// The first-level reduction in `layout` (forward when a.dy is null; kMask: the activation's
// gradient).
// Bf16 in NHWC with C % 8 == 0 reads 16 bytes (8 channels) per load, in the 4-wide order
// (bn::kRowBlock); NCHW keeps 4-wide bf16, whose order a vector of 8 would change.
// x's rows are x_pitch elements apart (Note [Dense block storage]).
template <Mask kMask, typename T>
void launch_sums_as(cudaStream_t stream, const Shape& shape, Layout layout, std::int64_t parts,
                    std::int64_t x_pitch, const bn::SumsArgs<T>& a) {
  constexpr int kWide = kWideVec<T>;
  const bool vec4 = reduction_inner(shape, layout) % 4 == 0 && aligned16({a.x, a.dy, a.y, a.g_out});
  const auto run = [&](auto vec) {
    with_index(shape, [&](auto index) {
      constexpr int kVec = decltype(vec)::value;
      using Index = typename decltype(index)::type;
      const std::int64_t rows = shape.n() * shape.h() * shape.w();
      if (layout == Layout::Nchw) {
        if constexpr (kVec <= 4) {  // never 8-wide, so never instantiated so
          const std::int64_t plane_vecs = shape.h() * shape.w() / kVec;
          const std::int64_t channel_vecs = shape.n() * plane_vecs;
          bn::nchw_sums_kernel<T, kMask, kVec, Index>
              <<<static_cast<unsigned>(shape.c() * parts), kReduceBlock, 0, stream>>>(
                  a, static_cast<Index>(parts), static_cast<Index>(shape.c()),
                  static_cast<Index>(plane_vecs), static_cast<Index>(channel_vecs),
                  static_cast<Index>(ceil_div(channel_vecs, parts)), x_pitch / kVec);
        }
      } else {
        const std::int64_t row_vecs = shape.c() / kVec;
        const dim3 grid(static_cast<unsigned>(parts),
                        static_cast<unsigned>(ceil_div(row_vecs, bn::kRowTileVecs<kVec>)));
        bn::nhwc_sums_kernel<T, kMask, kVec, Index><<<grid, bn::kRowBlock<kVec>, 0, stream>>>(
            a, static_cast<Index>(parts), static_cast<Index>(rows), static_cast<Index>(row_vecs),
            static_cast<Index>(ceil_div(rows, parts)), x_pitch / kVec);
      }
      VDNN_CHECK_LAUNCH();
    });
  };
  if constexpr (kWide > 4) {
    if (vec4 && layout == Layout::Nhwc && shape.c() % kWide == 0) {
      run(WideVec<T>{});
      return;
    }
  }
  if (vec4) {
    run(Vec4{});
  } else {
    run(Vec1{});
  }
}

template <typename T>
void launch_sums(cudaStream_t stream, const Shape& shape, Layout layout, std::int64_t parts,
                 std::int64_t x_pitch, const bn::SumsArgs<T>& a, Mask mask) {
  with_mask(mask, [&](auto m) {
    launch_sums_as<decltype(m)::value>(stream, shape, layout, parts, x_pitch, a);
  });
}

template <typename T>
T* data_or_null(const TensorView& view) {
  return view.empty() ? nullptr : device_data<T>(view);
}

}  // namespace

Epilogue fused_epilogue(Activation activation) {
  switch (activation) {
    case Activation::Silu:
      return Epilogue::Silu;
    case Activation::Relu6:
      return Epilogue::Relu6;
    case Activation::Hardswish:
      return Epilogue::Hardswish;
    case Activation::Gelu:
    case Activation::Sigmoid:
    case Activation::Hardsigmoid:
      break;
  }
  throw runtime::InvalidArgument(
      "the CUDA batch norm fuses silu, relu6 and hardswish, not " +
      std::string(type_name(LayerSpec{BatchNormActivationSpec{{}, activation}})));
}

Layout batch_norm_layout(const LayerOptions& options) noexcept {
  return options.layout == Layout::Nhwc && options.input_layout == Layout::Nhwc ? Layout::Nhwc
                                                                                : Layout::Nchw;
}

BatchNormCore::BatchNormCore(const BatchNorm2dSpec& spec, const Shape& x_shape, Layout layout,
                             DType dtype, runtime::Communicator* group)
    : spec_(spec),
      shape_(x_shape),
      layout_(layout),
      dtype_(dtype),
      channels_(x_shape.c()),
      parts_(reduction_parts(x_shape, layout)),
      per_channel_(6 * sizeof(float) * static_cast<std::size_t>(channels_)),
      partials_(2 * sizeof(double) * static_cast<std::size_t>(channels_ * parts_)),
      ranks_(group != nullptr && group->size() > 1
                 ? std::make_unique<BatchNormRanks>(*group, channels_)
                 : nullptr) {
  VDNN_EXPECTS(dtype == DType::F32 || dtype == DType::BF16, "batchnorm2d runs F32 or BF16");
  // The NHWC reduction puts the column tiles on the grid's y dimension.
  VDNN_EXPECTS(layout == Layout::Nchw || channels_ <= 65535 * bn::kRowTileVecs<1>,
               "batchnorm2d in NHWC takes at most 65535 * 32 channels");
}

BatchNormCore::~BatchNormCore() = default;

std::int64_t BatchNormCore::x_pitch(const TensorView& x) const {
  const std::int64_t row = row_elements(shape_, layout_);
  if (x.row_stride == 0 || x.row_stride == row) return row;
  VDNN_EXPECTS(x.layout == layout_ && x.row_stride > row,
               "batchnorm2d: a row-strided x must be of the layer's layout, rows apart");
  if (row % kStridedRowMultiple != 0 || x.row_stride % kStridedRowMultiple != 0 ||
      !aligned16({x.data})) {
    throw runtime::InvalidArgument(
        "batchnorm2d reads a row-strided x in 16-byte vectors: its rows (" + std::to_string(row) +
        " elements) and row stride (" + std::to_string(x.row_stride) +
        ") must be multiples of 8 elements and its data 16-byte aligned");
  }
  return x.row_stride;
}

void BatchNormCore::forward(cudaStream_t stream, const ForwardArgs& args, Epilogue epilogue) {
  if (dtype_ == DType::BF16) {
    forward_as<__nv_bfloat16>(stream, args, epilogue);
  } else {
    forward_as<float>(stream, args, epilogue);
  }
}

void BatchNormCore::backward(cudaStream_t stream, const BackwardArgs& args, Epilogue epilogue) {
  if (dtype_ == DType::BF16) {
    backward_as<__nv_bfloat16>(stream, args, epilogue);
  } else {
    backward_as<float>(stream, args, epilogue);
  }
}

template <typename T>
void BatchNormCore::forward_as(cudaStream_t stream, const ForwardArgs& args, Epilogue epilogue) {
  const T* x = device_data<T>(args.inputs[0]);
  const std::int64_t pitch = x_pitch(args.inputs[0]);
  const T* r = args.inputs.size() > 1 ? device_data<T>(args.inputs[1]) : nullptr;
  T* y = device_data<T>(args.output);
  const float* weight = args.params[0].as<float>();
  const float* bias = args.params[1].as<float>();
  float* running_mean = args.params[2].as<float>();
  float* running_var = args.params[3].as<float>();
  VDNN_EXPECTS(epilogue == Epilogue::Relu || r == nullptr,
               "a batch norm's residual add comes with its ReLU");
  // A recompute normalizes with the statistics the first forward saved, which nothing has changed
  // since (this node's backward comes later): the same bits, one running update per step
  // (Note [Recomputation]).
  if (args.training && !args.recompute) {
    const std::int64_t count = shape_.n() * shape_.h() * shape_.w();
    VDNN_EXPECTS(count > 1, "batchnorm2d training needs more than one value per channel");
    bn::SumsArgs<T> sums{};
    sums.x = x;
    sums.partials = partials_.as<double>();
    launch_sums(stream, shape_, layout_, parts_, pitch, sums, Mask::None);
    // The shifts lie in x's first row, where a row stride moves nothing.
    const std::int64_t shift_stride = layout_ == Layout::Nchw ? shape_.h() * shape_.w() : 1;
    const bn::StatsOut out{weight, running_mean, running_var, mean(), inv_std(), scale()};
    if (ranks_ != nullptr) {
      ranks_->forward_stats(stream, local_partials(), x, shift_stride, spec_.eps, spec_.momentum,
                            out);
    } else {
      bn::finish_forward_stats_kernel<T><<<combine_blocks(channels_), kCombineBlock, 0, stream>>>(
          partials_.as<double>(), static_cast<int>(parts_), x, shift_stride, channels_,
          static_cast<double>(count), spec_.eps, spec_.momentum, out);
      VDNN_CHECK_LAUNCH();
    }
  } else if (!args.training) {
    bn::stats_from_running_kernel<<<blocks_for(channels_), kBlockThreads, 0, stream>>>(
        running_mean, running_var, weight, spec_.eps, mean(), inv_std(), scale(), channels_);
    VDNN_CHECK_LAUNCH();
  }
  launch_forward(stream, shape_, layout_, mask_of(epilogue, r != nullptr), x, pitch, r, mean(),
                 scale(), bias, y);
  batch_stats_ = args.training;
}

template <typename T>
void BatchNormCore::backward_as(cudaStream_t stream, const BackwardArgs& args, Epilogue epilogue) {
  const GradTarget& x_target = args.grad_inputs[0];
  const GradTarget* r_target = args.grad_inputs.size() > 1 ? &args.grad_inputs[1] : nullptr;
  T* dx = data_or_null<T>(x_target.tensor);
  T* dr = r_target != nullptr ? data_or_null<T>(r_target->tensor) : nullptr;
  float* grad_weight = data_or_null<float>(args.grad_params[0]);
  float* grad_bias = data_or_null<float>(args.grad_params[1]);
  const bool reduce = dx != nullptr || grad_weight != nullptr || grad_bias != nullptr;
  VDNN_EXPECTS(epilogue == Epilogue::Relu || dr == nullptr,
               "a batch norm's residual gradient comes with its ReLU");
  if (!reduce && dr == nullptr) return;
  const bool residual = r_target != nullptr;
  const Mask mask = mask_of(epilogue, residual);
  // The residual's gradient is the masked gradient itself: the reduction writes it there when
  // nothing else has, and the input-gradient pass then reads it alone instead of dy and y.
  const bool g_in_dr = reduce && dr != nullptr && !r_target->accumulate;
  bn::SumsArgs<T> sums{};
  sums.x = device_data<T>(args.inputs[0]);  // first_input: always there
  const std::int64_t pitch = x_pitch(args.inputs[0]);
  sums.dy = device_data<T>(args.grad_output);
  sums.y = mask == Mask::Output ? device_data<T>(args.output) : nullptr;
  sums.mean = mean();
  sums.scale = scale();
  sums.shift = args.params[1].as<float>();
  sums.g_out = g_in_dr ? dr : nullptr;
  sums.partials = partials_.as<double>();
  if (reduce) {
    launch_sums(stream, shape_, layout_, parts_, pitch, sums, mask);
    const bn::GradsOut out{args.params[0].as<float>(),
                           inv_std(),
                           grad_weight,
                           grad_bias,
                           coeff_a(),
                           coeff_b(),
                           coeff_k()};
    // The ranks' sums only where they shape dx: batch statistics and a dx asked for (the same on
    // every rank: the graph decides).
    if (ranks_ != nullptr && batch_stats_ && dx != nullptr) {
      ranks_->backward_coefficients(stream, local_partials(), out);
    } else {
      bn::finish_backward_kernel<<<combine_blocks(channels_), kCombineBlock, 0, stream>>>(
          partials_.as<double>(), static_cast<int>(parts_), channels_,
          static_cast<double>(shape_.n() * shape_.h() * shape_.w()), batch_stats_, out);
      VDNN_CHECK_LAUNCH();
    }
  }
  if (dx == nullptr && (dr == nullptr || g_in_dr)) return;
  bn::GradArgs<T> a{};
  a.x = sums.x;
  a.dy = g_in_dr ? dr : sums.dy;
  a.y = sums.y;
  a.mean = mean();
  a.scale = sums.scale;
  a.shift = sums.shift;
  a.coeff_a = coeff_a();
  a.coeff_b = coeff_b();
  a.coeff_k = coeff_k();
  a.dx = dx;
  a.dr = g_in_dr ? nullptr : dr;
  a.dx_accumulate = x_target.accumulate;
  a.dr_accumulate = r_target != nullptr && r_target->accumulate;
  if (g_in_dr) {
    launch_input_grad<Mask::None, false>(stream, shape_, layout_, pitch, a);
  } else if (a.dr != nullptr) {
    launch_input_grad<Mask::Output, true>(stream, shape_, layout_, pitch, a);
  } else {
    with_mask(mask, [&](auto m) {
      launch_input_grad<decltype(m)::value, false>(stream, shape_, layout_, pitch, a);
    });
  }
}

}  // namespace vdnn::layers::cuda
