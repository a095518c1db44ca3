// Vectors: kVec consecutive elements moved as one load or store, for the element-wise, batch-norm
// and pooling kernels of layers/cuda/ (internal; .cu files only). kVec is 1 or 4; with 4 the
// pointer is 16-byte aligned (aligned16) and the index counts vectors. Elements are float or
// __nv_bfloat16 in memory (Note [Precision]) and float in registers: a bf16 store rounds to nearest
// even.
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

/// v = vector `vec_index` of p, through the read-only cache: p must not change during the kernel.
template <int kVec>
__device__ __forceinline__ void load_vec(const float* p, std::int64_t vec_index, float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(p) + vec_index);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else {
    v[0] = __ldg(p + vec_index);
  }
}

/// load_vec by a plain (coherent) load, for memory the same kernel then overwrites.
template <int kVec>
__device__ __forceinline__ void load_vec_mutable(const float* p, std::int64_t vec_index,
                                                 float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const float4 q = reinterpret_cast<const float4*>(p)[vec_index];
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else {
    v[0] = p[vec_index];
  }
}

/// Vector `vec_index` of p = v.
template <int kVec>
__device__ __forceinline__ void store_vec(float* p, std::int64_t vec_index,
                                          const float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    reinterpret_cast<float4*>(p)[vec_index] = make_float4(v[0], v[1], v[2], v[3]);
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

/// Four bf16 elements as one 8-byte access.
struct alignas(8) Bf16x4 {
  __nv_bfloat162 lo;
  __nv_bfloat162 hi;
};

__device__ __forceinline__ void unpack(const Bf16x4& q, float (&v)[4]) {
  const float2 lo = __bfloat1622float2(q.lo);
  const float2 hi = __bfloat1622float2(q.hi);
  v[0] = lo.x;
  v[1] = lo.y;
  v[2] = hi.x;
  v[3] = hi.y;
}

template <int kVec>
__device__ __forceinline__ void load_vec(const __nv_bfloat16* p, std::int64_t vec_index,
                                         float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const uint2 raw = __ldg(reinterpret_cast<const uint2*>(p) + vec_index);
    unpack(*reinterpret_cast<const Bf16x4*>(&raw), v);
  } else {
    v[0] = __bfloat162float(__ldg(p + vec_index));
  }
}

template <int kVec>
__device__ __forceinline__ void load_vec_mutable(const __nv_bfloat16* p, std::int64_t vec_index,
                                                 float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    unpack(reinterpret_cast<const Bf16x4*>(p)[vec_index], v);
  } else {
    v[0] = __bfloat162float(p[vec_index]);
  }
}

template <int kVec>
__device__ __forceinline__ void store_vec(__nv_bfloat16* p, std::int64_t vec_index,
                                          const float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    reinterpret_cast<Bf16x4*>(p)[vec_index] = {__floats2bfloat162_rn(v[0], v[1]),
                                               __floats2bfloat162_rn(v[2], v[3])};
  } else {
    p[vec_index] = __float2bfloat16_rn(v[0]);
  }
}

}  // namespace vdnn::layers::cuda
