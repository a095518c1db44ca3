// EigenMaps: row-major Eigen maps over raw tensor memory, shared by the CPU GEMM layers
// (convolution, fully connected). Internal to layers/cpu; include only from .cpp files.
#pragma once

#include <Eigen/Core>

namespace vdnn::layers::cpu {

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<RowMajor<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMajor<T>>;
template <typename T>
using VectorMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstVectorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
template <typename T>
using RowVectorMap = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
template <typename T>
using ConstRowVectorMap = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;

/// dst = src, or dst += src when `add`; both without a temporary for the product.
template <typename Dst, typename Src>
void store(Dst&& dst, const Src& src, bool add) {
  if (add) {
    dst.noalias() += src;
  } else {
    dst.noalias() = src;
  }
}

}  // namespace vdnn::layers::cpu
