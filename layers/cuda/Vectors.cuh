// Vectors: kVec consecutive elements moved as one load or store, for the element-wise, batch-norm
// and pooling kernels of layers/cuda/ (internal; .cu files only). kVec is 1, 4 or 8; with 4 or 8
// the pointer is 16-byte aligned (aligned16) and the index counts vectors. Elements are float or
// __nv_bfloat16 in memory (Note [Precision]) and float in registers: a bf16 store rounds to nearest
// even. Eight bf16 are one 16-byte access (kWideVec); eight floats are two.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "runtime/TensorView.hpp"

namespace vdnn::layers::cuda {

/// Whether every non-null pointer is 16-byte aligned (float4 access).
inline bool aligned16(std::initializer_list<const void*> pointers) {
  return std::all_of(pointers.begin(), pointers.end(), [](const void* p) {
    return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  });
}

/// The elements of T one 16-byte access moves: 4 floats, 8 bf16.
template <typename T>
inline constexpr int kWideVec = static_cast<int>(16 / sizeof(T));

/// v = vector `vec_index` of p, through the read-only cache: p must not change during the kernel.
/// kVec 8 is two float4 loads.
template <int kVec>
__device__ __forceinline__ void load_vec(const float* p, std::int64_t vec_index, float (&v)[kVec]) {
  static_assert(kVec == 1 || kVec % 4 == 0, "float vectors are 1 or whole float4s");
  if constexpr (kVec % 4 == 0) {
#pragma unroll
    for (int h = 0; h < kVec / 4; ++h) {
      const float4 q = __ldg(reinterpret_cast<const float4*>(p) + vec_index * (kVec / 4) + h);
      v[4 * h] = q.x;
      v[4 * h + 1] = q.y;
      v[4 * h + 2] = q.z;
      v[4 * h + 3] = q.w;
    }
  } else {
    v[0] = __ldg(p + vec_index);
  }
}

/// load_vec by a plain (coherent) load, for memory the same kernel then overwrites.
template <int kVec>
__device__ __forceinline__ void load_vec_mutable(const float* p, std::int64_t vec_index,
                                                 float (&v)[kVec]) {
  static_assert(kVec == 1 || kVec % 4 == 0, "float vectors are 1 or whole float4s");
  if constexpr (kVec % 4 == 0) {
#pragma unroll
    for (int h = 0; h < kVec / 4; ++h) {
      const float4 q = reinterpret_cast<const float4*>(p)[vec_index * (kVec / 4) + h];
      v[4 * h] = q.x;
      v[4 * h + 1] = q.y;
      v[4 * h + 2] = q.z;
      v[4 * h + 3] = q.w;
    }
  } else {
    v[0] = p[vec_index];
  }
}

/// Vector `vec_index` of p = v.
template <int kVec>
__device__ __forceinline__ void store_vec(float* p, std::int64_t vec_index,
                                          const float (&v)[kVec]) {
  static_assert(kVec == 1 || kVec % 4 == 0, "float vectors are 1 or whole float4s");
  if constexpr (kVec % 4 == 0) {
#pragma unroll
    for (int h = 0; h < kVec / 4; ++h) {
      reinterpret_cast<float4*>(p)[vec_index * (kVec / 4) + h] =
          make_float4(v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3]);
    }
  } else {
    p[vec_index] = v[0];
  }
}

/// The device type of a view's elements: float for F32, __nv_bfloat16 for BF16 (else
/// runtime::InvalidArgument, as TensorView::as).
template <typename T>
T* device_data(const runtime::TensorView& view) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return reinterpret_cast<__nv_bfloat16*>(view.as<runtime::BFloat16>());
  } else {
    return view.as<T>();
  }
}

/// An element as float, and a float as an element (bf16: rounded to nearest even).
__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else {
    return x;
  }
}

/// kVec (4 or 8) bf16 elements as one 8- or 16-byte access, in pairs.
template <int kVec>
struct alignas(2 * kVec) Bf16Vec {
  __nv_bfloat162 pairs[kVec / 2];
};

/// The raw word type of one Bf16Vec access: uint2 (8 bytes) or uint4 (16).
template <int kVec>
using Bf16Word = std::conditional_t<kVec == 8, uint4, uint2>;

template <int kVec>
__device__ __forceinline__ void unpack(const Bf16Vec<kVec>& q, float (&v)[kVec]) {
#pragma unroll
  for (int h = 0; h < kVec / 2; ++h) {
    const float2 pair = __bfloat1622float2(q.pairs[h]);
    v[2 * h] = pair.x;
    v[2 * h + 1] = pair.y;
  }
}

template <int kVec>
__device__ __forceinline__ void load_vec(const __nv_bfloat16* p, std::int64_t vec_index,
                                         float (&v)[kVec]) {
  static_assert(kVec == 1 || kVec == 4 || kVec == 8, "bf16 vectors are 1, 4 or 8");
  if constexpr (kVec == 1) {
    v[0] = __bfloat162float(__ldg(p + vec_index));
  } else {
    const Bf16Word<kVec> raw = __ldg(reinterpret_cast<const Bf16Word<kVec>*>(p) + vec_index);
    unpack(*reinterpret_cast<const Bf16Vec<kVec>*>(&raw), v);
  }
}

template <int kVec>
__device__ __forceinline__ void load_vec_mutable(const __nv_bfloat16* p, std::int64_t vec_index,
                                                 float (&v)[kVec]) {
  static_assert(kVec == 1 || kVec == 4 || kVec == 8, "bf16 vectors are 1, 4 or 8");
  if constexpr (kVec == 1) {
    v[0] = __bfloat162float(p[vec_index]);
  } else {
    unpack(reinterpret_cast<const Bf16Vec<kVec>*>(p)[vec_index], v);
  }
}

template <int kVec>
__device__ __forceinline__ void store_vec(__nv_bfloat16* p, std::int64_t vec_index,
                                          const float (&v)[kVec]) {
  static_assert(kVec == 1 || kVec == 4 || kVec == 8, "bf16 vectors are 1, 4 or 8");
  if constexpr (kVec == 1) {
    p[vec_index] = __float2bfloat16_rn(v[0]);
  } else {
    Bf16Vec<kVec> q;
#pragma unroll
    for (int h = 0; h < kVec / 2; ++h) q.pairs[h] = __floats2bfloat162_rn(v[2 * h], v[2 * h + 1]);
    reinterpret_cast<Bf16Vec<kVec>*>(p)[vec_index] = q;
  }
}

}  // namespace vdnn::layers::cuda
