// HostStagedCommunicator: a test-only communicator through which several ranks share ONE device
// (threads of this process, each with its own streams): every collective stages the stream's
// memory through the host and runs an in-process collective there (runtime::LocalCommunicator),
// so a data-parallel run can be checked on one GPU, without NCCL. Header-only: the GPU tests and
// its CPU test (on CPU streams) both build it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/Communicator.hpp"
#include "runtime/Error.hpp"
#include "runtime/LocalCommunicator.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::test {

/// A stream of host memory whose work runs at once on the calling thread: copy_async is memcpy,
/// wait() has nothing to wait for. A task's exception is kept for the next synchronize().
class ImmediateHostStream final : public runtime::Stream {
 public:
  const std::string& name() const noexcept override { return name_; }
  void enqueue(std::function<void()> task) override {
    try {
      task();
    } catch (...) {
      if (!error_) error_ = std::current_exception();
    }
  }
  void copy_async(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void wait(const runtime::Event& /*event*/) override {}
  /// Rethrows (once) the first exception a task threw since the last call.
  void synchronize() override {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  std::string name_ = "host";
  std::exception_ptr error_;
};

/// One rank's endpoint over `host_group` (a LocalCommunicatorGroup endpoint, not owned, which must
/// outlive this). all_reduce and broadcast take memory of the stream they are given (a CUDA
/// stream's device memory, or host memory on a CPU stream): they synchronize that stream, copy the
/// elements to a host buffer (Stream::copy_async), run `host_group`'s collective there, copy the
/// result back and synchronize again, so they return with the collective complete, its error
/// (CommunicatorError) thrown from the call. Host-side calls (barrier, all_gather, abort, ...) go
/// to `host_group` as they are. One thread drives an endpoint, as for any communicator.
class HostStagedCommunicator final : public runtime::Communicator {
 public:
  explicit HostStagedCommunicator(runtime::Communicator& host_group) : host_group_(host_group) {}

  int rank() const noexcept override { return host_group_.rank(); }
  int size() const noexcept override { return host_group_.size(); }
  void all_reduce(runtime::Stream& stream, float* data, std::size_t count,
                  runtime::Reduction op) override {
    VDNN_EXPECTS(data != nullptr || count == 0, "all_reduce: no buffer for the elements");
    staged(stream, data, count * sizeof(float), [&](runtime::Stream& host, void* staging) {
      host_group_.all_reduce(host, static_cast<float*>(staging), count, op);
    });
  }
  void broadcast(runtime::Stream& stream, void* data, std::size_t bytes) override {
    VDNN_EXPECTS(data != nullptr || bytes == 0, "broadcast: no buffer for the bytes");
    staged(stream, data, bytes, [&](runtime::Stream& host, void* staging) {
      host_group_.broadcast(host, staging, bytes);
    });
  }
  void barrier() override { host_group_.barrier(); }
  std::vector<double> all_gather(double value) override { return host_group_.all_gather(value); }
  void raise_if_failed() override { host_group_.raise_if_failed(); }
  void abort(const std::string& reason) noexcept override { host_group_.abort(reason); }

 private:
  // Copies `bytes` at `data` (the stream's memory) into staging_ once the stream's work is done,
  // runs `collective` on staging_ and copies the result back, waiting for that copy too.
  void staged(runtime::Stream& stream, void* data, std::size_t bytes,
              const std::function<void(runtime::Stream&, void*)>& collective) {
    staging_.resize((bytes + sizeof(float) - 1) / sizeof(float));
    void* staging = staging_.data();
    if (bytes > 0) stream.copy_async(staging, data, bytes);
    stream.synchronize();
    collective(host_stream_, staging);
    host_stream_.synchronize();
    if (bytes > 0) stream.copy_async(data, staging, bytes);
    stream.synchronize();  // staging_ is reused by the next collective
  }

  runtime::Communicator& host_group_;
  ImmediateHostStream host_stream_;
  std::vector<float> staging_;  // floats, so that all_reduce's view of it is aligned
};

/// Runs step(rank, communicator) for each of `ranks` ranks on a thread of its own, each through a
/// HostStagedCommunicator over one LocalCommunicatorGroup (collectives wait at most `timeout`).
/// A rank's exception aborts the group, so that no other rank waits for it; returns each rank's
/// error, empty where its step returned.
template <typename Step>
std::vector<std::string> on_staged_ranks(int ranks, Step step,
                                         std::chrono::seconds timeout = std::chrono::seconds(60)) {
  runtime::LocalCommunicatorGroup group(ranks, timeout);
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      HostStagedCommunicator staged(group.endpoint(r));
      try {
        step(r, staged);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
        staged.abort(e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

}  // namespace vdnn::test
