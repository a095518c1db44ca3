// BatchNormMoments: how batch norm turns a channel's sums about a centre into its mean and biased
// variance, and how the ranks of a synchronized batch norm exchange their own moments exactly and
// merge them in rank order. One definition for host and device code (no CUDA header).
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

/// Mean and biased variance of `count` (> 0) values whose sums about `centre` are `s`; the
/// variance is clamped at 0 (rounding), a NaN stays NaN. Centred sums do not cancel where the
/// centre is near the mean.
VDNN_MOMENTS_HOST_DEVICE inline Moments moments(CentredSums s, double count, double centre) {
  const double shifted_mean = s.sum / count;
  const double var = s.squares / count - shifted_mean * shifted_mean;
  return {centre + shifted_mean, var < 0.0 ? 0.0 : var};
}

/// A double carried by two floats: hi = float(v), lo = float(v - hi); hi + lo gives v back to
/// about 2^-48 relative (a NaN stays NaN). A float all-reduce (sum) of a buffer in which each rank
/// fills only its own slot, zeros elsewhere, is exact (x + 0 is x in any order): so every rank
/// receives every rank's doubles, whatever order the transport adds in.
struct FloatPair {
  float hi = 0.0f;
  float lo = 0.0f;
};

VDNN_MOMENTS_HOST_DEVICE inline FloatPair to_pair(double v) {
  const auto hi = static_cast<float>(v);
  return {hi, static_cast<float>(v - static_cast<double>(hi))};
}

VDNN_MOMENTS_HOST_DEVICE inline double from_pair(FloatPair p) {
  return static_cast<double>(p.hi) + static_cast<double>(p.lo);
}

/// One rank's moments of a channel: its mean and its sum of squared deviations from that mean
/// (m2 = count * biased variance).
struct RankMoments {
  double mean = 0.0;
  double m2 = 0.0;
};

/// This rank's moments from its `count` values' sums about `shift`.
VDNN_MOMENTS_HOST_DEVICE inline RankMoments rank_moments(CentredSums s, double count,
                                                         double shift) {
  const Moments m = moments(s, count, shift);
  return {m.mean, m.var * count};
}

/// The global batch's moments from `ranks` ranks of `count` values each, rank r's moments being
/// read(r): the mean of the ranks' means, then m2 = sum over r of m2_r + count (mean_r - mean)^2
/// (the exact identity for a union of groups), both added in rank order, so every rank computes the
/// same bits. Read: a callable int -> RankMoments.
template <typename Read>
VDNN_MOMENTS_HOST_DEVICE Moments merged(int ranks, double count, const Read& read) {
  double mean = 0.0;
  for (int r = 0; r < ranks; ++r) mean += read(r).mean;
  mean /= static_cast<double>(ranks);
  double m2 = 0.0;
  for (int r = 0; r < ranks; ++r) {
    const RankMoments own = read(r);
    const double d = own.mean - mean;
    m2 += own.m2 + count * d * d;
  }
  const double var = m2 / (count * static_cast<double>(ranks));
  return {mean, var < 0.0 ? 0.0 : var};
}

}  // namespace vdnn::layers::bn_moments
