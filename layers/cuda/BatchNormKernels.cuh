// BatchNormKernels: the device code of the CUDA batch norm and of the fused batch norm -> [add] ->
// ReLU and batch norm -> smooth activation (BatchNormCore.cu includes it, nothing else does).
// Deterministic per-channel reductions in both layouts (fixed-order trees, no atomics) and the
// element-wise passes, with the fused chain's activation and residual as template parameters so
// that the plain and the fused layers run the same code.
// Feature maps are T in memory (float, or __nv_bfloat16: Note [Precision]) and float in registers;
// per-channel values are float and the sums double whatever T is. x alone may be a row-strided view
// (Note [Dense block storage]): the reductions index it by its row pitch, the element-wise passes
// through XRows; every other map is packed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "layers/ActivationMath.hpp"
#include "layers/cuda/BatchNormFinish.cuh"
#include "layers/cuda/BlockReduce.cuh"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"

namespace vdnn::layers::cuda::bn {

// Loads each thread keeps in flight.
inline constexpr int kUnroll = 4;
// NHWC reductions: the vectors of a row one block covers, 32 channels (128 bytes of floats, one
// cache line; 64 of bf16, still whole 32-byte sectors). The same for both storage types, so that
// the reductions, and so the statistics and parameter gradients, are bitwise the same on the same
// values.
template <int kVec>
inline constexpr int kRowTileVecs = 32 / kVec;
// The threads of an NHWC reduction block. With 8-wide vectors (bf16's 16-byte loads) a tile is half
// as many vector columns, so half the threads give each column the lanes (rows walked at once) of
// the 4-wide path: every channel sums the same rows in the same order as 4-wide F32 and BF16 do.
template <int kVec>
inline constexpr int kRowBlock = kVec == 8 ? kReduceBlock / 2 : kReduceBlock;
// Rows a thread of an NHWC reduction loads before any use: kUnroll of 4-wide vectors, one of
// 8-wide (bf16) ones. Each thread adds its rows in the same order whatever this is (row by row),
// so it changes no bit. With 8-wide rows, kUnroll of them took 158-160 registers, 16% occupancy,
// and the reduction ran at 0.9-1.6 TB/s (ncu, ResNet-50 b128 bf16 on the H200, 2026-11-27).
template <int kVec>
inline constexpr int kRowUnroll = kVec == 8 ? 1 : kUnroll;
// NHWC reduction blocks each SM must hold (__launch_bounds__' second argument; 0: no bound).
// 8-wide: 8, 64 registers a thread at most. Unbounded they took 72-79 with a renormalizing mask
// (92-99 before those masks' scale and shift moved to shared memory), 7 blocks an SM, and the 1024
// blocks ran in two waves; bounded, MobileNetV2 b256's ReLU6 backward reductions took 26% less time
// (H200, 2026-11-27). The others unbounded: even a bound of 1 raised ptxas' register counts.
template <int kVec>
inline constexpr int kRowMinBlocks = kVec == 8 ? 65536 / 64 / kRowBlock<kVec> : 0;

// ---- First-level reductions --------------------------------------------------------------------

// The fused chain's activation, named by where its derivative comes from in backward: none (a
// plain batch norm); the ReLU's mask from the forward's output y (y > 0, the residual chain) or
// from the input renormalized with the forward's statistics (z = (x - mean) * scale + shift > 0,
// the forward's own rounding, so the same mask without reading y); or silu's, relu6's or
// hardswish's derivative at that renormalized z (ActivationMath's activation_grad).
enum class Mask : std::uint8_t { None, Output, Input, Silu, Relu6, Hardswish };

// Whether backward renormalizes x (every mask but None and Output).
constexpr bool renormalizes(Mask m) { return m != Mask::None && m != Mask::Output; }

// The smooth activation of a mask past Input.
constexpr Activation smooth_activation(Mask m) {
  return m == Mask::Silu    ? Activation::Silu
         : m == Mask::Relu6 ? Activation::Relu6
                            : Activation::Hardswish;
}

// The per-channel values a renormalizing mask renormalizes with, besides the forward's mean: its
// scale and shift (the batch norm's bias).
struct Renorm {
  float scale;
  float shift;
};

// What the first-level reductions read. Forward (dy null): sums of x - shift and (x - shift)^2,
// shift the channel's first value so that the variance does not cancel. Backward: sums of g and
// g * (x - mean), where g = dy, or with a mask the activation's gradient (the ReLU's: y or z > 0
// ? dy : 0), which the backward also stores to g_out when that is set. Every block writes its two
// sums for channel c and part p to partials[2 (c parts + p)] and the next double.
template <typename T>
struct SumsArgs {
  const T* x;  // the one map whose rows may be apart (the kernels' x_row_vecs or x_sample_vecs)
  const T* dy;
  const T* y;  // Mask::Output only: the fused forward's output
  const float* mean;
  const float* scale;  // renormalizing masks only: the forward's scale and the batch norm's bias
  const float* shift;
  T* g_out;  // backward with a mask: null, or where the masked gradient goes (g is a T value)
  double* partials;
};

// Loads the terms of one vector, x's at x_at (its rows may be apart: Note [Dense block storage])
// and the packed maps' at `at`; gs gets the masked gradient's inputs (the mask is applied in
// add_term's caller, after every load of the step is in flight).
template <Mask kMask, int kVec, typename T>
__device__ __forceinline__ void load_terms(const SumsArgs<T>& a, bool backward, std::int64_t x_at,
                                           std::int64_t at, float (&xs)[kVec], float (&gs)[kVec],
                                           float (&ys)[kVec]) {
  load_vec<kVec>(a.x, x_at, xs);
  if (!backward) return;
  load_vec<kVec>(a.dy, at, gs);
  if constexpr (kMask == Mask::Output) load_vec<kVec>(a.y, at, ys);
}

// g where the forward stored a positive y for the pre-rounding value z, else 0: z rounded to T as
// the store rounds it, then > 0. Rounding to nearest keeps the sign, but bf16 rounds a positive
// float below half its smallest subnormal to +0; a NaN is never > 0. For float it is z > 0.
template <typename T>
__device__ __forceinline__ float gate(float z, float g) {
  if constexpr (std::is_same_v<T, float>) {
    return z > 0.0f ? g : 0.0f;
  } else {
    return to_float(from_float<T>(z)) > 0.0f ? g : 0.0f;
  }
}

// The activation's gradient of g. References, so that an operand the mask does not use is never
// read. Mask::Input renormalizes x as the forward did and decides as its rounded store: the mask
// of y. A smooth activation's derivative is taken at the same z in float, where the forward
// applied the activation before its one rounding (so with bf16 maps not at the rounded z the
// unfused chain's activation reads). mean and n are read by the renormalizing masks only.
template <Mask kMask, typename T>
__device__ __forceinline__ float masked(const float& g, const float& y, const float& x,
                                        const float& mean, const Renorm& n) {
  if constexpr (kMask == Mask::Output) {
    return y > 0.0f ? g : 0.0f;
  } else if constexpr (kMask == Mask::Input) {
    return gate<T>(__fmaf_rn(x - mean, n.scale, n.shift), g);
  } else if constexpr (renormalizes(kMask)) {
    return activation_grad<smooth_activation(kMask)>(__fmaf_rn(x - mean, n.scale, n.shift), g);
  } else {
    return g;
  }
}

// Channel c's Renorm (renormalizing masks only), read through the read-only cache.
template <Mask kMask, typename T>
__device__ __forceinline__ Renorm renorm_of(const SumsArgs<T>& a, std::int64_t c) {
  if constexpr (renormalizes(kMask)) {
    return {__ldg(a.scale + c), __ldg(a.shift + c)};
  } else {
    return {0.0f, 0.0f};
  }
}

// A renormalizing mask's Renorm from the block's shared copy (volatile: read per use, never held in
// registers); nothing is read for the other masks.
template <Mask kMask>
__device__ __forceinline__ Renorm shared_renorm(const volatile Renorm* r) {
  if constexpr (renormalizes(kMask)) {
    return {r->scale, r->shift};
  } else {
    return {0.0f, 0.0f};
  }
}

// One element's terms. Explicit roundings: the plain and the fused layers add the same values in
// the same order and must get the same bits, whatever the compiler would contract.
// g is read only in backward.
__device__ __forceinline__ void add_term(bool backward, float x, const float& g, float centre,
                                         double& s0, double& s1) {
  const float d = x - centre;
  if (backward) {
    s0 = __dadd_rn(s0, g);
    s1 = __fma_rn(g, d, s1);
  } else {
    s0 = __dadd_rn(s0, d);
    s1 = __fma_rn(d, d, s1);
  }
}

// NCHW. Block b reduces chunk b % parts of channel b / parts, where a channel is the `channel_vecs`
// vectors of its N planes taken in order; per-thread sums in double, then block_reduce. x's samples
// are x_sample_vecs vectors apart (channels * plane_vecs when packed), an index with no division.
template <typename T, Mask kMask, int kVec, typename Index>
__global__ void __launch_bounds__(kReduceBlock)
    nchw_sums_kernel(SumsArgs<T> a, Index parts, Index channels, Index plane_vecs,
                     Index channel_vecs, Index chunk, std::int64_t x_sample_vecs) {
  const Index c = blockIdx.x / parts;
  const Index begin = (blockIdx.x - c * parts) * chunk;
  const Index end = begin + chunk < channel_vecs ? begin + chunk : channel_vecs;
  const bool backward = a.dy != nullptr;
  const float centre =
      backward ? a.mean[c]
               : to_float(__ldg(a.x + static_cast<std::int64_t>(c) * plane_vecs * kVec));
  const Renorm renorm = backward ? renorm_of<kMask>(a, c) : Renorm{};
  double s0 = 0.0;
  double s1 = 0.0;
  for (Index i = begin + threadIdx.x; i < end; i += kUnroll * kReduceBlock) {
    float xs[kUnroll][kVec];
    float gs[kUnroll][kVec];
    float ys[kUnroll][kVec];
    std::int64_t ats[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index j = i + u * kReduceBlock;
      if (j < end) {
        const Index n = j / plane_vecs;
        const std::int64_t in_sample =
            static_cast<std::int64_t>(c) * plane_vecs + (j - n * plane_vecs);
        ats[u] = static_cast<std::int64_t>(n) * channels * plane_vecs + in_sample;
        load_terms<kMask, kVec>(a, backward,
                                static_cast<std::int64_t>(n) * x_sample_vecs + in_sample, ats[u],
                                xs[u], gs[u], ys[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i + u * kReduceBlock < end) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          if (backward) gs[u][k] = masked<kMask, T>(gs[u][k], ys[u][k], xs[u][k], centre, renorm);
          add_term(backward, xs[u][k], gs[u][k], centre, s0, s1);
        }
        if (kMask != Mask::None && a.g_out != nullptr) store_vec<kVec>(a.g_out, ats[u], gs[u]);
      }
    }
  }
  s0 = block_reduce(s0, Sum{});
  s1 = block_reduce(s1, Sum{});
  if (threadIdx.x == 0) {
    a.partials[2 * static_cast<std::int64_t>(blockIdx.x)] = s0;
    a.partials[2 * static_cast<std::int64_t>(blockIdx.x) + 1] = s1;
  }
}

// Sums each column's values over its `lanes` threads (thread = lane * width + column) with a fixed
// tree in shared memory; lane 0 of each column gets the totals. Every thread of the block (of
// kThreads) calls it.
template <int kThreads, int kCount>
__device__ __forceinline__ void column_sums(double (&values)[kCount], int width, int lanes) {
  __shared__ double shared[kCount][kThreads];
#pragma unroll
  for (int j = 0; j < kCount; ++j) shared[j][threadIdx.x] = values[j];
  __syncthreads();
  int top = 1;
  while (top < lanes) top *= 2;
  const int lane = static_cast<int>(threadIdx.x) / width;
  for (int step = top / 2; step > 0; step /= 2) {
    if (lane < step && lane + step < lanes) {
#pragma unroll
      for (int j = 0; j < kCount; ++j) {
        shared[j][threadIdx.x] = shared[j][threadIdx.x] + shared[j][threadIdx.x + step * width];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kCount; ++j) values[j] = shared[j][threadIdx.x];
}

// The Renorms of an NHWC reduction block's column `column` (of its tile's `width`, from vector
// tile_begin), which a renormalizing mask's backward copies to shared memory (every thread of the
// block calls it); null for the other masks. Read per use (volatile): held in registers for kVec
// channels they took 8-wide's past 64 a thread (ptxas, sm_90).
template <Mask kMask, int kVec, typename T, typename Index>
__device__ __forceinline__ const volatile Renorm* column_renorms(const SumsArgs<T>& a,
                                                                 bool backward, Index tile_begin,
                                                                 int width, Index column) {
  if constexpr (renormalizes(kMask)) {
    __shared__ Renorm tile[kRowTileVecs<kVec> * kVec];
    if (!backward) return nullptr;  // the same for the whole block
    for (int i = static_cast<int>(threadIdx.x); i < width * kVec; i += kRowBlock<kVec>) {
      tile[i] = renorm_of<kMask>(a, static_cast<std::int64_t>(tile_begin) * kVec + i);
    }
    __syncthreads();
    return tile + column * kVec;
  } else {
    return nullptr;
  }
}

// NHWC: rows are the N * H * W pixels, each `row_vecs` vectors of channels (x's rows x_row_vecs
// apart: row_vecs when packed, Note [Dense block storage]). Block (p, t) reduces row chunk p of
// column tile t (kRowTileVecs vectors, fewer in the last tile): each thread keeps one vector column
// and walks the chunk's rows `lanes` apart, so a warp reads whole 128-byte segments (64-byte ones
// of 4-wide bf16); then column_sums combines the lanes in a fixed order.
// Blocks of kRowBlock threads: 8-wide gets the 4-wide lanes when a tile's channels are a multiple
// of 8 (256 / (2 w) == 128 / w).
template <typename T, Mask kMask, int kVec, typename Index>
__global__ void __launch_bounds__(kRowBlock<kVec>, kRowMinBlocks<kVec>)
    nhwc_sums_kernel(SumsArgs<T> a, Index parts, Index rows, Index row_vecs, Index chunk,
                     std::int64_t x_row_vecs) {
  const Index tile_begin = static_cast<Index>(blockIdx.y) * kRowTileVecs<kVec>;
  const int width = row_vecs - tile_begin < static_cast<Index>(kRowTileVecs<kVec>)
                        ? static_cast<int>(row_vecs - tile_begin)
                        : kRowTileVecs<kVec>;
  const int lanes = kRowBlock<kVec> / width;
  const int lane = static_cast<int>(threadIdx.x) / width;
  const Index column = tile_begin + static_cast<Index>(static_cast<int>(threadIdx.x) % width);
  const auto chunk64 = static_cast<std::int64_t>(chunk);
  const auto rows64 = static_cast<std::int64_t>(rows);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * chunk64;
  const std::int64_t last = first + chunk64 < rows64 ? first + chunk64 : rows64;
  const Index begin = first < last ? static_cast<Index>(first) : Index{0};
  const Index end = first < last ? static_cast<Index>(last) : Index{0};
  const bool backward = a.dy != nullptr;
  const std::int64_t channel0 = static_cast<std::int64_t>(column) * kVec;
  float centre[kVec];
  double sums[2 * kVec];  // kVec sums of the first kind, then kVec of the second
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    centre[k] = lane < lanes
                    ? (backward ? a.mean[channel0 + k] : to_float(__ldg(a.x + channel0 + k)))
                    : 0.0f;
    sums[k] = 0.0;
    sums[kVec + k] = 0.0;
  }
  const volatile Renorm* column_renorm =
      column_renorms<kMask, kVec>(a, backward, tile_begin, width, column - tile_begin);
  const Index stride = static_cast<Index>(lanes);
  constexpr int kRows = kRowUnroll<kVec>;
  for (Index r = begin + static_cast<Index>(lane); lane < lanes && r < end; r += kRows * stride) {
    float xs[kRows][kVec];
    float gs[kRows][kVec];
    float ys[kRows][kVec];
#pragma unroll
    for (int u = 0; u < kRows; ++u) {
      const Index row = r + u * stride;
      if (row < end) {
        load_terms<kMask, kVec>(a, backward, static_cast<std::int64_t>(row) * x_row_vecs + column,
                                static_cast<std::int64_t>(row * row_vecs + column), xs[u], gs[u],
                                ys[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kRows; ++u) {
      const Index row = r + u * stride;
      if (row < end) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          if (backward) {
            gs[u][k] = masked<kMask, T>(gs[u][k], ys[u][k], xs[u][k], centre[k],
                                        shared_renorm<kMask>(column_renorm + k));
          }
          add_term(backward, xs[u][k], gs[u][k], centre[k], sums[k], sums[kVec + k]);
        }
        if (kMask != Mask::None && a.g_out != nullptr) {
          store_vec<kVec>(a.g_out, static_cast<std::int64_t>(row * row_vecs + column), gs[u]);
        }
      }
    }
  }
  column_sums<kRowBlock<kVec>>(sums, width, lanes);
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const std::int64_t at = 2 * ((channel0 + k) * static_cast<std::int64_t>(parts) + blockIdx.x);
      a.partials[at] = sums[k];
      a.partials[at + 1] = sums[kVec + k];
    }
  }
}

// ---- Per-channel finish kernels (both layouts) -------------------------------------------------

// Batch statistics of the training forward (store_stats). The shift of channel c is
// x[c * shift_stride], the value the forward sums were centred on.
template <typename T>
__global__ void finish_forward_stats_kernel(const double* partials, int parts, const T* x,
                                            std::int64_t shift_stride, std::int64_t channels,
                                            double count, double eps, double momentum,
                                            StatsOut out) {
  const std::int64_t c = combine_channel();
  if (c >= channels) return;  // whole warps leave together
  const unsigned lane = threadIdx.x % kWarpSize;
  bn_moments::CentredSums sums;
  combine_parts(partials, c, parts, lane, sums.sum, sums.squares);
  if (lane != 0) return;
  const double shift = static_cast<double>(to_float(x[c * shift_stride]));
  store_stats(c, bn_moments::moments(sums, count, shift), count, eps, momentum, out);
}

// What the inference forward and a later backward read of the running buffers.
__global__ void stats_from_running_kernel(const float* running_mean, const float* running_var,
                                          const float* weight, double eps, float* mean,
                                          float* inv_std, float* scale, std::int64_t channels) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const double s = 1.0 / sqrt(static_cast<double>(running_var[c]) + eps);
  mean[c] = running_mean[c];
  inv_std[c] = static_cast<float>(s);
  scale[c] = static_cast<float>(weight[c] * s);
}

// Parameter gradients where asked for, and the input gradient's coefficients.
__global__ void finish_backward_kernel(const double* partials, int parts, std::int64_t channels,
                                       double count, bool batch_stats, GradsOut out) {
  const std::int64_t c = combine_channel();
  if (c >= channels) return;
  const unsigned lane = threadIdx.x % kWarpSize;
  double sum_g = 0.0;
  double sum_g_centred = 0.0;
  combine_parts(partials, c, parts, lane, sum_g, sum_g_centred);
  if (lane != 0) return;
  store_param_grads(c, sum_g, sum_g_centred, out);
  store_coefficients(c, sum_g, sum_g_centred, count, batch_stats, out);
}

// ---- Element-wise passes -----------------------------------------------------------------------

// How an element-wise pass finds the channel of vector i's components.
enum class Map : std::uint8_t {
  PlaneVector,     // NCHW, a vector never crosses a plane: one channel, (i / plane) % channels
  PlaneElement,    // NCHW: each component's own, (e / plane) % channels with e its element index
  ChannelVector,   // NHWC, C % kVec == 0: channels kVec (i % channels).., `channels` counting
                   // vectors
  ChannelElement,  // NHWC: each component's own, e % channels
};

template <Map kMap, int kVec, typename Index>
struct ChannelMap {
  Index plane;     // PlaneVector: vectors per plane; PlaneElement: elements per plane; else unused
  Index channels;  // ChannelVector: C / kVec; else C

  // v[k] = p[channel of component k of vector i]. ChannelVector needs p 16-byte aligned.
  __device__ __forceinline__ void gather(const float* p, Index i, float (&v)[kVec]) const {
    if constexpr (kMap == Map::PlaneVector) {
      const float value = __ldg(p + (i / plane) % channels);
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[k] = value;
    } else if constexpr (kMap == Map::ChannelVector) {
      static_assert(kVec % 4 == 0, "ChannelVector maps whole float4s");
      load_vec<kVec>(p, static_cast<std::int64_t>(i % channels), v);
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const Index e = i * kVec + k;
        v[k] = __ldg(p + (kMap == Map::PlaneElement ? (e / plane) % channels : e % channels));
      }
    }
  }
};

// Where an element-wise pass finds x's vector g: at g when x is packed (kStrided false: the index
// the other maps take, no arithmetic), else in row g / row_vecs, pitch_vecs vectors apart (a
// row-strided view, Note [Dense block storage]; a vector never crosses a row).
template <bool kStrided, typename Index>
struct XRows {
  Index row_vecs;
  std::int64_t pitch_vecs;

  __device__ __forceinline__ std::int64_t at(std::uint64_t g) const {
    if constexpr (kStrided) {
      const auto i = static_cast<Index>(g);
      return static_cast<std::int64_t>(i / row_vecs) * pitch_vecs + i % row_vecs;
    } else {
      return static_cast<std::int64_t>(g);
    }
  }
};

// Vectors a thread of an element-wise pass loads before any use: kUnroll, or one of 8 (bf16's
// 16-byte ones). With two, the bf16 input-gradient pass took 80-94 registers, 23-33% occupancy and
// ran at 1.3-2.0 TB/s (ncu, ResNet-50 b128 bf16 on the H200, 2026-11-27); more threads with fewer
// registers keep as many bytes in flight.
template <int kVec>
inline constexpr int kElementwiseUnroll = kVec == 8 ? 1 : kUnroll;

// Block b covers kElementwiseUnroll * kBlockThreads vectors from b times that, all loads issued
// before any use so that enough bytes are in flight.
template <int kVec>
__device__ __forceinline__ std::uint64_t elementwise_base() {
  return static_cast<std::uint64_t>(blockIdx.x) * (kElementwiseUnroll<kVec> * kBlockThreads) +
         threadIdx.x;
}

// The forward's activation of z for mask kMask: none, the ReLU (z < 0 ? 0 : z, a NaN stays NaN)
// or the smooth one's formula.
template <Mask kMask>
__device__ __forceinline__ float activate(float z) {
  if constexpr (kMask == Mask::Output || kMask == Mask::Input) {
    return z < 0.0f ? 0.0f : z;
  } else if constexpr (renormalizes(kMask)) {
    return activation_value<smooth_activation(kMask)>(z);
  } else {
    return z;
  }
}

// y = (x - mean) * scale + bias, then with kResidual + r, then kMask's activation: the unfused
// chain's operations, each rounded as that chain rounds it in float. A bf16 y is rounded once, at
// the store (the unfused bf16 chain would round after each layer).
template <typename T, Mask kMask, bool kResidual, Map kMap, int kVec, typename Index, bool kStrided>
__global__ void __launch_bounds__(kBlockThreads)
    normalize_kernel(const T* x, const T* r, const float* mean, const float* scale,
                     const float* bias, T* y, Index total_vecs, ChannelMap<kMap, kVec, Index> map,
                     XRows<kStrided, Index> x_rows) {
  constexpr int kSteps = kElementwiseUnroll<kVec>;
  const std::uint64_t base = elementwise_base<kVec>();
  float v[kSteps][kVec];
  float rs[kSteps][kVec];
#pragma unroll
  for (int u = 0; u < kSteps; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g < total_vecs) {
      load_vec<kVec>(x, x_rows.at(g), v[u]);
      if constexpr (kResidual) load_vec<kVec>(r, static_cast<std::int64_t>(g), rs[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < kSteps; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g >= total_vecs) continue;
    const auto i = static_cast<Index>(g);
    float m[kVec];
    float s[kVec];
    float b[kVec];
    map.gather(mean, i, m);
    map.gather(scale, i, s);
    map.gather(bias, i, b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      float z = __fmaf_rn(v[u][k] - m[k], s[k], b[k]);
      if constexpr (kResidual) z = __fadd_rn(z, rs[u][k]);
      v[u][k] = activate<kMask>(z);
    }
    store_vec<kVec>(y, static_cast<std::int64_t>(g), v[u]);
  }
}

// What the input-gradient pass reads and writes. g = dy, or with a mask the activation's gradient
// (as in SumsArgs); dr only with kResidualGrad. A target with accumulate is read, added to in float
// and rounded once.
template <typename T>
struct GradArgs {
  const T* x;  // read when dx is set (and by the renormalizing masks); rows as XRows says
  const T* dy;
  const T* y;  // Mask::Output only
  const float* mean;
  const float* scale;  // renormalizing masks only, as in SumsArgs
  const float* shift;
  const float* coeff_a;
  const float* coeff_b;
  const float* coeff_k;
  T* dx;  // (+)= a * g + b * (x - mean) + k; null: not asked for
  T* dr;  // kResidualGrad: (+)= g, the residual's gradient
  bool dx_accumulate;
  bool dr_accumulate;
};

template <typename T, Mask kMask, bool kResidualGrad, Map kMap, int kVec, typename Index,
          bool kStrided>
__global__ void __launch_bounds__(kBlockThreads)
    input_grad_kernel(GradArgs<T> a, Index total_vecs, ChannelMap<kMap, kVec, Index> map,
                      XRows<kStrided, Index> x_rows) {
  constexpr int kSteps = kElementwiseUnroll<kVec>;
  const std::uint64_t base = elementwise_base<kVec>();
  float xs[kSteps][kVec];
  float gs[kSteps][kVec];
  float ys[kSteps][kVec];
  float dxs[kSteps][kVec];
  float drs[kSteps][kVec];
#pragma unroll
  for (int u = 0; u < kSteps; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g >= total_vecs) continue;
    const auto at = static_cast<std::int64_t>(g);
    load_vec<kVec>(a.dy, at, gs[u]);
    if constexpr (kMask == Mask::Output) load_vec<kVec>(a.y, at, ys[u]);
    if (a.dx != nullptr || renormalizes(kMask)) {
      load_vec<kVec>(a.x, x_rows.at(g), xs[u]);
    }
    if (a.dx != nullptr && a.dx_accumulate) load_vec_mutable<kVec>(a.dx, at, dxs[u]);
    if (kResidualGrad && a.dr_accumulate) load_vec_mutable<kVec>(a.dr, at, drs[u]);
  }
#pragma unroll
  for (int u = 0; u < kSteps; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g >= total_vecs) continue;
    const auto at = static_cast<std::int64_t>(g);
    const auto i = static_cast<Index>(g);
    float m[kVec];
    map.gather(a.mean, i, m);
    float dz[kVec];
    if constexpr (renormalizes(kMask)) {
      float s[kVec];
      float b[kVec];
      map.gather(a.scale, i, s);
      map.gather(a.shift, i, b);
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        dz[k] = masked<kMask, T>(gs[u][k], ys[u][k], xs[u][k], m[k], {s[k], b[k]});
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        dz[k] = masked<kMask, T>(gs[u][k], ys[u][k], xs[u][k], m[k], Renorm{});
    }
    if constexpr (kResidualGrad) {
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        drs[u][k] = a.dr_accumulate ? __fadd_rn(drs[u][k], dz[k]) : dz[k];
      store_vec<kVec>(a.dr, at, drs[u]);
    }
    if (a.dx == nullptr) continue;
    float ca[kVec];
    float cb[kVec];
    float ck[kVec];
    map.gather(a.coeff_a, i, ca);
    map.gather(a.coeff_b, i, cb);
    map.gather(a.coeff_k, i, ck);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float v = __fadd_rn(__fmaf_rn(dz[k], ca[k], __fmul_rn(xs[u][k] - m[k], cb[k])), ck[k]);
      dxs[u][k] = a.dx_accumulate ? __fadd_rn(dxs[u][k], v) : v;
    }
    store_vec<kVec>(a.dx, at, dxs[u]);
  }
}

}  // namespace vdnn::layers::cuda::bn
