// The in-process communicator: ranks meet at phase barriers in shared memory; each rank sums its
// slice of the elements over all ranks in rank order, then every rank copies the whole result.
#include "runtime/LocalCommunicator.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

namespace vdnn::runtime {
namespace detail {

// What the ranks of one group share. Every member is guarded by `mutex`, except that between
// the meetings of one collective each rank reads the others' buffers and writes its own slice of
// `scratch` (the meetings order those accesses).
struct LocalGroupState {
  LocalGroupState(int ranks, std::chrono::milliseconds wait)
      : size(ranks),
        timeout(wait),
        arrived(static_cast<std::size_t>(ranks), false),
        buffers(static_cast<std::size_t>(ranks), nullptr),
        sizes(static_cast<std::size_t>(ranks), 0),
        gathered(static_cast<std::size_t>(ranks), 0.0) {}

  const int size;
  const std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable changed;
  std::uint64_t generation = 0;  // meetings completed
  std::vector<bool> arrived;     // at the meeting under way
  int arrivals = 0;
  std::vector<void*> buffers;      // each rank's buffer in the collective under way
  std::vector<std::size_t> sizes;  // and its element (or byte) count
  std::vector<float> scratch;      // all_reduce's result
  std::vector<double> gathered;    // all_gather's values, by rank
  int failed_rank = -1;            // the first failure, or -1
  std::string failure;

  void fail(int rank, const std::string& why) {
    if (failed_rank >= 0) return;
    failed_rank = rank;
    failure = why;
    changed.notify_all();
  }

  [[noreturn]] void throw_failure() const { throw CommunicatorError(failure, failed_rank); }

  // Blocks until every rank has come to this meeting, at most `timeout`; throws once the group
  // has failed, or fails it naming the first rank still missing.
  void meet(std::unique_lock<std::mutex>& lock, int rank, const char* op) {
    if (failed_rank >= 0) throw_failure();
    const std::uint64_t meeting = generation;
    arrived[static_cast<std::size_t>(rank)] = true;
    if (++arrivals == size) {
      arrivals = 0;
      std::fill(arrived.begin(), arrived.end(), false);
      ++generation;
      changed.notify_all();
      return;
    }
    const bool met =
        changed.wait_for(lock, timeout, [&] { return generation != meeting || failed_rank >= 0; });
    if (!met) {
      const auto missing = std::find(arrived.begin(), arrived.end(), false) - arrived.begin();
      fail(static_cast<int>(missing),
           std::string(op) + ": rank " + std::to_string(missing) + " did not come within " +
               std::to_string(timeout.count()) + " ms (rank " + std::to_string(rank) + " waited)");
    }
    if (failed_rank >= 0) throw_failure();
  }

  // After the first meeting: every rank must have brought rank 0's count.
  void check_sizes(const char* op) {
    for (int r = 1; r < size; ++r) {
      if (sizes[static_cast<std::size_t>(r)] == sizes[0]) continue;
      fail(r, std::string(op) + ": rank " + std::to_string(r) + " brought " +
                  std::to_string(sizes[static_cast<std::size_t>(r)]) + " elements, rank 0 " +
                  std::to_string(sizes[0]));
      throw_failure();
    }
  }
};

}  // namespace detail

namespace {

using detail::LocalGroupState;

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<LocalGroupState> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return state_->size; }

  void all_reduce(Stream& stream, float* data, std::size_t count, Reduction op) override {
    VDNN_EXPECTS(data != nullptr || count == 0, "all_reduce: no buffer for the elements");
    stream.enqueue([this, data, count, op] { reduce_now(data, count, op); });
  }

  void broadcast(Stream& stream, void* data, std::size_t bytes) override {
    VDNN_EXPECTS(data != nullptr || bytes == 0, "broadcast: no buffer for the bytes");
    stream.enqueue([this, data, bytes] { broadcast_now(data, bytes); });
  }

  void barrier() override {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->meet(lock, rank_, "barrier");
  }

  std::vector<double> all_gather(double value) override {
    LocalGroupState& s = *state_;
    std::unique_lock<std::mutex> lock(s.mutex);
    s.gathered[static_cast<std::size_t>(rank_)] = value;
    s.meet(lock, rank_, "all-gather");
    std::vector<double> all = s.gathered;
    s.meet(lock, rank_, "all-gather");  // every rank has its copy: the slots may be reused
    return all;
  }

  void raise_if_failed() override {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->failed_rank >= 0) state_->throw_failure();
  }

  void abort(const std::string& reason) noexcept override {
    try {
      const std::lock_guard<std::mutex> lock(state_->mutex);
      state_->fail(rank_, "rank " + std::to_string(rank_) + " aborted: " + reason);
    } catch (...) {  // a string that cannot be made: the group stays as it was
    }
  }

 private:
  // Meets the others with this rank's buffer posted, and checks that they brought its size.
  void post(std::unique_lock<std::mutex>& lock, void* data, std::size_t count, const char* op) {
    LocalGroupState& s = *state_;
    s.buffers[static_cast<std::size_t>(rank_)] = data;
    s.sizes[static_cast<std::size_t>(rank_)] = count;
    s.meet(lock, rank_, op);
    s.check_sizes(op);
  }

  void reduce_now(float* data, std::size_t count, Reduction op) {
    LocalGroupState& s = *state_;
    std::unique_lock<std::mutex> lock(s.mutex);
    if (s.scratch.size() < count) s.scratch.resize(count);  // no rank reads it before the meeting
    post(lock, data, count, "all-reduce");
    lock.unlock();
    const auto n = static_cast<std::size_t>(s.size);
    const std::size_t begin = count * static_cast<std::size_t>(rank_) / n;
    const std::size_t end = count * static_cast<std::size_t>(rank_ + 1) / n;
    const float scale = 1.0f / static_cast<float>(s.size);
    for (std::size_t i = begin; i < end; ++i) {
      float sum = static_cast<const float*>(s.buffers[0])[i];
      for (std::size_t r = 1; r < n; ++r) sum += static_cast<const float*>(s.buffers[r])[i];
      s.scratch[i] = op == Reduction::Mean ? sum * scale : sum;
    }
    lock.lock();
    s.meet(lock, rank_, "all-reduce");  // every slice written
    lock.unlock();
    std::copy_n(s.scratch.data(), count, data);
    lock.lock();
    s.meet(lock, rank_, "all-reduce");  // every rank has its copy: the scratch may be reused
  }

  void broadcast_now(void* data, std::size_t bytes) {
    LocalGroupState& s = *state_;
    std::unique_lock<std::mutex> lock(s.mutex);
    post(lock, data, bytes, "broadcast");
    lock.unlock();
    if (rank_ != 0 && bytes > 0) std::memcpy(data, s.buffers[0], bytes);
    lock.lock();
    s.meet(lock, rank_, "broadcast");  // rank 0's buffer read by all
  }

  std::shared_ptr<LocalGroupState> state_;
  int rank_;
};

}  // namespace

LocalCommunicatorGroup::LocalCommunicatorGroup(int size, std::chrono::milliseconds timeout) {
  VDNN_EXPECTS(size >= 1 && size <= 4096,
               "a communicator group has 1 to 4096 ranks, got " + std::to_string(size));
  VDNN_EXPECTS(timeout.count() > 0, "a communicator's timeout is positive");
  state_ = std::make_shared<LocalGroupState>(size, timeout);
  for (int r = 0; r < size; ++r)
    endpoints_.push_back(std::make_unique<LocalCommunicator>(state_, r));
}

LocalCommunicatorGroup::~LocalCommunicatorGroup() = default;

Communicator& LocalCommunicatorGroup::endpoint(int rank) {
  VDNN_EXPECTS(
      rank >= 0 && rank < static_cast<int>(endpoints_.size()),
      "rank " + std::to_string(rank) + " of a group of " + std::to_string(endpoints_.size()));
  return *endpoints_[static_cast<std::size_t>(rank)];
}

}  // namespace vdnn::runtime
