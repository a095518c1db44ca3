// Elements: the device element type behind a host element type (float -> float, runtime::BFloat16
// -> __nv_bfloat16), for the launchers whose host-side signatures take host element types
// (internal; .cu files only).
#pragma once

#include <cuda_bf16.h>

#include "runtime/BFloat16.hpp"

namespace vdnn::layers::cuda {

template <typename T>
struct DeviceElement {
  using type = T;
};
template <>
struct DeviceElement<runtime::BFloat16> {
  using type = __nv_bfloat16;
};

/// The device type of host element type T: same size, same bits.
template <typename T>
using DeviceElementOf = typename DeviceElement<T>::type;

/// p as a pointer to the device type of its elements.
template <typename T>
DeviceElementOf<T>* device_pointer(T* p) {
  static_assert(sizeof(DeviceElementOf<T>) == sizeof(T));
  return reinterpret_cast<DeviceElementOf<T>*>(p);
}
template <typename T>
const DeviceElementOf<T>* device_pointer(const T* p) {
  static_assert(sizeof(DeviceElementOf<T>) == sizeof(T));
  return reinterpret_cast<const DeviceElementOf<T>*>(p);
}

}  // namespace vdnn::layers::cuda
