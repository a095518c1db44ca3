// NCCL behind the Communicator interface: non-blocking setup polled against a deadline, and a
// watchdog thread that aborts the communicator when a collective hangs or NCCL reports an error.
#include "runtime/cuda/NcclCommunicator.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/CudaStream.hpp"
#include "runtime/cuda/StreamAdapter.hpp"

namespace vdnn::runtime::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// The setup's bandwidth measurement: all-reduces of 64 MiB (NCCL's bus bandwidth is near its
// plateau from there; a gradient bucket is 25 MiB) timed together.
constexpr std::size_t kMeasuredAllReduceBytes = std::size_t{64} << 20;
constexpr int kTimedAllReduces = 5;

// How often the watchdog looks at the pending collectives and NCCL's error state.
constexpr std::chrono::milliseconds kWatchdogPeriod{50};

std::string nccl_text(ncclResult_t result, ncclComm_t comm) {
  std::string text = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return text;
}

// rank 0's unique id, to every rank: through the rendezvous, or NCCL's own with NCCL_COMM_ID.
ncclUniqueId unique_id(const LaunchConfig& launch, std::chrono::milliseconds timeout) {
  ncclUniqueId id{};
  if (launch.rank == 0 || std::getenv("NCCL_COMM_ID") != nullptr) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) {
      throw CommunicatorError("ncclGetUniqueId: " + std::string(ncclGetErrorString(r)),
                              launch.rank);
    }
    if (std::getenv("NCCL_COMM_ID") != nullptr) return id;
    std::vector<std::byte> bytes(sizeof(id));
    std::memcpy(bytes.data(), &id, sizeof(id));
    RendezvousServer(launch.master_port, launch.world_size).broadcast(bytes, timeout);
    return id;
  }
  const std::vector<std::byte> bytes =
      rendezvous_receive(launch.master_addr, launch.master_port, launch.rank, timeout);
  if (bytes.size() != sizeof(id)) {
    throw RendezvousError("rank 0 sent " + std::to_string(bytes.size()) +
                          " bytes for NCCL's unique id of " + std::to_string(sizeof(id)));
  }
  std::memcpy(&id, bytes.data(), sizeof(id));
  return id;
}

cudaStream_t stream_of(Stream& stream) {
  auto* adapter = dynamic_cast<StreamAdapter*>(&stream);
  VDNN_EXPECTS(adapter != nullptr, "NCCL collectives run on a CUDA context's stream");
  return adapter->issue_here();
}

std::uint64_t free_device_bytes() {
  std::size_t free = 0;
  std::size_t total = 0;
  VDNN_CHECK_CUDA(cudaMemGetInfo(&free, &total));
  return free;
}

// The device a rank runs on, made current before anything of it is created.
int select_device(int local_rank) {
  VDNN_CHECK_CUDA(cudaSetDevice(local_rank));
  return local_rank;
}

// Every use of the NCCL communicator (issuing, polling, aborting) holds mutex_, so the watchdog's
// abort never races a call on it.
class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const LaunchConfig& launch, const NcclOptions& options)
      : rank_(launch.rank),
        size_(launch.world_size),
        timeout_(options.timeout),
        device_(select_device(launch.local_rank)),
        barrier_value_(device_memory_, sizeof(float)),
        gather_slots_(device_memory_, static_cast<std::size_t>(size_) * sizeof(double)) {
    const std::uint64_t free_before = free_device_bytes();
    if (options.deterministic) {
      ::setenv("NCCL_ALGO", "Ring", 1);
      ::setenv("NCCL_PROTO", "Simple", 1);
    }
    const ncclUniqueId id = unique_id(launch, timeout_);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // so that ncclCommAbort can end a collective that hangs
    std::unique_lock<std::mutex> lock(mutex_);
    started(lock, ncclCommInitRankConfig(&comm_, size_, id, rank_, &config), "setting up NCCL");
    lock.unlock();
    watchdog_ = std::thread([this] { watch(); });
    barrier();  // NCCL connects its peers at the first collective: their buffers count too
    bus_bytes_per_second_ = measure_bus_bandwidth();
    const std::uint64_t free_after = free_device_bytes();
    device_bytes_ = free_before > free_after ? free_before - free_after : 0;
  }

  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  NcclCommunicator(NcclCommunicator&&) = delete;
  NcclCommunicator& operator=(NcclCommunicator&&) = delete;

  ~NcclCommunicator() override {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    watchdog_.join();
    close();
  }

  int rank() const noexcept override { return rank_; }
  std::uint64_t device_bytes() const noexcept override { return device_bytes_; }
  double bus_bytes_per_second() const noexcept override { return bus_bytes_per_second_; }
  int size() const noexcept override { return size_; }

  void all_reduce(Stream& stream, float* data, std::size_t count, Reduction op) override {
    VDNN_EXPECTS(data != nullptr || count == 0, "all_reduce: no buffer for the elements");
    const cudaStream_t s = stream_of(stream);
    const ncclRedOp_t reduction = op == Reduction::Mean ? ncclAvg : ncclSum;
    enqueue(s, "all-reduce of " + std::to_string(count) + " floats",
            [&] { return ncclAllReduce(data, data, count, ncclFloat32, reduction, comm_, s); });
  }

  void broadcast(Stream& stream, void* data, std::size_t bytes) override {
    VDNN_EXPECTS(data != nullptr || bytes == 0, "broadcast: no buffer for the bytes");
    const cudaStream_t s = stream_of(stream);
    enqueue(s, "broadcast of " + std::to_string(bytes) + " bytes",
            [&] { return ncclBroadcast(data, data, bytes, ncclInt8, 0, comm_, s); });
  }

  void barrier() override {
    auto* value = static_cast<float*>(barrier_value_.data());
    const cudaStream_t s = barrier_stream_.get();
    enqueue(s, "barrier",
            [&] { return ncclAllReduce(value, value, 1, ncclFloat32, ncclSum, comm_, s); });
    // The watchdog ends the wait at the timeout: an aborted communicator's kernels return.
    VDNN_CHECK_CUDA(cudaStreamSynchronize(s));
    raise_if_failed();
  }

  // A sum in which each rank brings its own slot and zeros elsewhere: exact, x + 0 is x.
  std::vector<double> all_gather(double value) override {
    std::vector<double> slots(static_cast<std::size_t>(size_), 0.0);
    slots[static_cast<std::size_t>(rank_)] = value;
    auto* device = static_cast<double*>(gather_slots_.data());
    const cudaStream_t s = barrier_stream_.get();
    const std::size_t bytes = slots.size() * sizeof(double);
    VDNN_CHECK_CUDA(cudaMemcpyAsync(device, slots.data(), bytes, cudaMemcpyHostToDevice, s));
    enqueue(s, "all-gather", [&] {
      return ncclAllReduce(device, device, slots.size(), ncclFloat64, ncclSum, comm_, s);
    });
    VDNN_CHECK_CUDA(cudaMemcpyAsync(slots.data(), device, bytes, cudaMemcpyDeviceToHost, s));
    VDNN_CHECK_CUDA(cudaStreamSynchronize(s));  // the watchdog ends it at the timeout
    raise_if_failed();
    return slots;
  }

  void raise_if_failed() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    throw_if_failed();
  }

  void abort(const std::string& reason) noexcept override {
    const std::lock_guard<std::mutex> lock(mutex_);
    fail("rank " + std::to_string(rank_) + " aborted: " + reason, rank_);
  }

 private:
  // Times kTimedAllReduces all-reduces of kMeasuredAllReduceBytes one by one (after one that
  // warms NCCL's channels up and a barrier that lines the ranks up) on the barrier stream, every
  // rank together; the bus bandwidth of the fastest, bytes x 2 (N - 1) / N per second (a rank
  // that comes late only slows the first). The buffer is freed before NCCL's own memory is
  // measured.
  double measure_bus_bandwidth() {
    Buffer buffer(device_memory_, kMeasuredAllReduceBytes);
    VDNN_CHECK_CUDA(
        cudaMemsetAsync(buffer.data(), 0, kMeasuredAllReduceBytes, barrier_stream_.get()));
    auto* data = static_cast<float*>(buffer.data());
    const std::size_t count = kMeasuredAllReduceBytes / sizeof(float);
    const cudaStream_t s = barrier_stream_.get();
    const auto all_reduce = [&] {
      enqueue(s, "all-reduce bandwidth measurement",
              [&] { return ncclAllReduce(data, data, count, ncclFloat32, ncclSum, comm_, s); });
    };
    all_reduce();
    barrier();
    std::vector<CudaEvent> marks;
    for (int i = 0; i <= kTimedAllReduces; ++i) marks.emplace_back(EventTiming::kEnabled);
    marks[0].record(s);
    for (int i = 1; i <= kTimedAllReduces; ++i) {
      all_reduce();
      marks[static_cast<std::size_t>(i)].record(s);
    }
    VDNN_CHECK_CUDA(cudaStreamSynchronize(s));  // the watchdog ends it at the timeout
    raise_if_failed();
    double seconds = std::numeric_limits<double>::infinity();
    for (std::size_t i = 1; i < marks.size(); ++i) {
      seconds = std::min(seconds, elapsed_ms(marks[i - 1], marks[i]) / 1e3);
    }
    const double n = static_cast<double>(size_);
    return seconds > 0.0
               ? static_cast<double>(kMeasuredAllReduceBytes) * 2.0 * (n - 1.0) / n / seconds
               : 0.0;
  }

  struct Pending {
    CudaEvent done;
    std::string what;
    Clock::time_point deadline;
  };

  // Finalizes (flushing what is queued) within the timeout, else aborts; then frees. No thread
  // but the destructor's is left.
  void close() noexcept {
    if (aborted_) return;
    ncclResult_t state = ncclCommFinalize(comm_);
    const Clock::time_point deadline = Clock::now() + timeout_;
    while (state == ncclInProgress && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ncclCommGetAsyncError(comm_, &state);
    }
    if (state == ncclSuccess) {
      ncclCommDestroy(comm_);
    } else {
      ncclCommAbort(comm_);
    }
  }

  // Under mutex_.
  void throw_if_failed() const {
    if (!failure_.empty()) throw CommunicatorError(failure_, failed_rank_);
  }

  // Waits out ncclInProgress (non-blocking mode) up to the timeout, letting the watchdog in
  // between polls; fails the communicator and throws on an error or at the deadline. A collective's
  // enqueue finishes within microseconds: the first kSpinPolls polls only yield (a 1 ms sleep per
  // collective made ResNet-50 under --sync-bn, 106 small all-reduces a step, 7x slower), later
  // ones sleep (the setup's connections may take seconds).
  void started(std::unique_lock<std::mutex>& lock, ncclResult_t result, const std::string& what) {
    constexpr int kSpinPolls = 20000;
    const Clock::time_point deadline = Clock::now() + timeout_;
    for (int poll = 0; result == ncclInProgress && Clock::now() < deadline; ++poll) {
      lock.unlock();
      if (poll < kSpinPolls) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      lock.lock();
      throw_if_failed();
      ncclCommGetAsyncError(comm_, &result);
    }
    if (result == ncclSuccess) return;
    const std::string why = result == ncclInProgress ? "did not finish within " +
                                                           std::to_string(timeout_.count()) + " ms"
                                                     : nccl_text(result, comm_);
    fail("rank " + std::to_string(rank_) + ": " + what + ": " + why, -1);
    throw_if_failed();
  }

  // Issues a collective on `stream` and hands its completion to the watchdog.
  template <typename Issue>
  void enqueue(cudaStream_t stream, const std::string& what, Issue issue) {
    std::unique_lock<std::mutex> lock(mutex_);
    throw_if_failed();
    started(lock, issue(), what);
    Pending pending{CudaEvent(), what, Clock::now() + timeout_};
    pending.done.record(stream);
    pending_.push_back(std::move(pending));
  }

  // Under mutex_: the first failure is kept and the communicator aborted, which ends its
  // kernels, so no stream waits on it forever.
  void fail(const std::string& why, int failed_rank) noexcept {
    if (!failure_.empty()) return;
    try {
      failure_ = why;
    } catch (...) {
      failure_ = "NCCL communicator failed";
    }
    failed_rank_ = failed_rank;
    aborted_ = true;
    ncclCommAbort(comm_);
  }

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, kWatchdogPeriod);
      if (aborted_) {
        pending_.clear();
        continue;
      }
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        fail("rank " + std::to_string(rank_) + ": NCCL: " + nccl_text(async, comm_), -1);
        continue;
      }
      while (!pending_.empty() && cudaEventQuery(pending_.front().done.get()) == cudaSuccess) {
        pending_.pop_front();
      }
      if (!pending_.empty() && Clock::now() > pending_.front().deadline) {
        fail("rank " + std::to_string(rank_) + ": " + pending_.front().what +
                 " did not complete within " + std::to_string(timeout_.count()) +
                 " ms: another rank died or hung; NCCL aborted",
             -1);
      }
    }
  }

  const int rank_;
  const int size_;
  const std::chrono::milliseconds timeout_;
  const int device_;  // current from here on: what follows lives on it
  DeviceMemoryResource device_memory_;
  Buffer barrier_value_;  // barrier()'s all-reduced float
  Buffer gather_slots_;   // all_gather()'s doubles, one per rank
  CudaStream barrier_stream_;
  ncclComm_t comm_ = nullptr;
  std::mutex mutex_;  // guards comm_'s use and everything below
  std::condition_variable wake_;
  std::deque<Pending> pending_;  // collectives in issue order, completing in that order
  std::string failure_;
  int failed_rank_ = -1;
  bool aborted_ = false;
  bool stopping_ = false;
  std::uint64_t device_bytes_ = 0;     // NCCL's own, measured at setup
  double bus_bytes_per_second_ = 0.0;  // a large all-reduce's, measured at setup
  std::thread watchdog_;               // last: it reads the members above
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(const LaunchConfig& launch,
                                                     const NcclOptions& options) {
  VDNN_EXPECTS(options.timeout.count() > 0, "the NCCL timeout is positive");
  return std::make_unique<NcclCommunicator>(launch, options);
}

}  // namespace vdnn::runtime::cuda
