// Vectors: kVec consecutive floats moved as one load or store, for the element-wise, batch-norm and
// pooling kernels of layers/cuda/ (internal; .cu files only). kVec is 1 or 4; with 4 the pointer is
// 16-byte aligned (aligned16) and the index counts float4s.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>

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

}  // namespace vdnn::layers::cuda
