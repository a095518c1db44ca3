// SetupProgress: what a session's setup is doing, for a person waiting (a line per part, counts
// within long parts), and how long each part took (summary.json's `setup_seconds`).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace vdnn::graph {

/// Times setup by parts and tells a sink what is happening. Not thread-safe: one thread sets up.
class SetupProgress {
 public:
  /// Receives each status line ("measuring convolutions 23/53"); `count` is true for a line that
  /// only advances a count (a terminal may rewrite it in place). Empty: silent.
  using Sink = std::function<void(const std::string& line, bool count)>;

  explicit SetupProgress(Sink sink = {});

  /// Ends the running part, if any, and starts `part`, telling the sink `what`. Seconds add up
  /// per part name, so a part may run more than once.
  void begin(const std::string& part, const std::string& what);
  /// Within the running part: "`what` done/total", rewritten as the count advances.
  void count(const std::string& what, int done, int total);
  /// Ends the running part (nothing when none runs).
  void end();

  /// Seconds per part, in the order each first began.
  const std::vector<std::pair<std::string, double>>& parts() const noexcept { return parts_; }
  /// The sum of parts().
  double total() const noexcept;

 private:
  using Clock = std::chrono::steady_clock;
  Sink sink_;
  std::vector<std::pair<std::string, double>> parts_;
  std::size_t running_ = 0;  // index in parts_ of the running part; parts_.size(): none
  Clock::time_point started_;
};

}  // namespace vdnn::graph
