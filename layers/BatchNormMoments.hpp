// BatchNormMoments: how batch norm turns a channel's sums about a centre into its mean and biased
// variance, and moves such sums to another centre, so that the ranks of a synchronized batch norm
// add sums about one common centre. One definition for host and device code (no CUDA header).
#pragma once

#ifdef __CUDACC__
#define VDNN_MOMENTS_HOST_DEVICE __host__ __device__
#else
#define VDNN_MOMENTS_HOST_DEVICE
#endif

namespace vdnn::layers::bn_moments {

/// A channel's sums about a centre h: of x - h and of (x - h)^2 over its values x.
struct CentredSums {
  double sum = 0.0;
  double squares = 0.0;
};

/// A channel's batch mean and biased variance.
struct Moments {
  double mean = 0.0;
  double var = 0.0;
};

/// The sums of the same `count` values about `to`, given `s` about `from`: with d = from - to,
/// sum + count d and squares + d (2 sum + count d), exact in real arithmetic (in double, the
/// rounding of terms of the size of the sums).
VDNN_MOMENTS_HOST_DEVICE inline CentredSums recentred(CentredSums s, double count, double from,
                                                      double to) {
  const double d = from - to;
  return {s.sum + count * d, s.squares + d * (2.0 * s.sum + count * d)};
}

/// Mean and biased variance of `count` (> 0) values whose sums about `centre` are `s`; the
/// variance is clamped at 0 (rounding), a NaN stays NaN. Centred sums do not cancel where the
/// centre is near the mean.
VDNN_MOMENTS_HOST_DEVICE inline Moments moments(CentredSums s, double count, double centre) {
  const double shifted_mean = s.sum / count;
  const double var = s.squares / count - shifted_mean * shifted_mean;
  return {centre + shifted_mean, var < 0.0 ? 0.0 : var};
}

}  // namespace vdnn::layers::bn_moments
