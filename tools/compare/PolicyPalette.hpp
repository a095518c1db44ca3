// PolicyPalette: the report's colours: one fixed colour per policy name (paler in bf16), and the
// colours of the timeline, the budget lines and the chart backgrounds, all distinct from each
// other.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace vdnn::tools {

/// Colours that only chart content uses, so a screenshot check can look for them.
inline constexpr const char* kTimelineDeviceColour = "#4477AA";
inline constexpr const char* kTimelineOffloadedColour = "#EE7733";
inline constexpr const char* kBudgetColour = "#555555";
inline constexpr const char* kPredictedColour = "#111111";
inline constexpr const char* kMarkerColour = "#666666";  // does-not-fit and failed markers

/// Each chart's plot background: a pale tint of its own, by which a screenshot finds the chart.
inline constexpr const char* kThroughputFrame = "#F6F6FB";
inline constexpr const char* kPeakMemoryFrame = "#F6FBF6";
inline constexpr const char* kSearchFrame = "#FBF6F6";
inline constexpr const char* kTimelineFrame = "#FAFAF2";

/// Colour-blind-friendly colours (Paul Tol's "muted" scheme, then some of his "vibrant" and
/// "light" ones) with a stable assignment: the policies vdnn knows always get the same colour,
/// other names take the remaining colours in the order given to the constructor.
class PolicyPalette {
 public:
  /// `policies`: every policy name the report shows, in the order they first appear.
  explicit PolicyPalette(const std::vector<std::string>& policies);

  /// The colour ("#rrggbb") of `policy`; a name not given to the constructor gets a neutral grey.
  const std::string& colour(const std::string& policy) const;
  /// The colour of `policy`'s runs in `precision`: colour(policy) for fp32, a paler tint of it
  /// (halfway to white) for bf16, so that the two precisions of one policy read as a pair.
  std::string colour(const std::string& policy, const std::string& precision) const;

 private:
  std::map<std::string, std::string> colours_;
  std::string unknown_ = "#BBBBBB";
};

}  // namespace vdnn::tools
