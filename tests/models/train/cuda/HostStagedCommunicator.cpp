// The host-staged test communicator: collectives of a device's ranks run by the in-process group
// on host copies of their buffers.
#include "models/train/cuda/HostStagedCommunicator.hpp"

#include <cstring>
#include <utility>

namespace vdnn::test {

void ImmediateHostStream::enqueue(std::function<void()> task) {
  try {
    task();
  } catch (...) {
    if (!error_) error_ = std::current_exception();
  }
}

void ImmediateHostStream::copy_async(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void ImmediateHostStream::synchronize() {
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void HostStagedCommunicator::all_reduce(runtime::Stream& stream, float* data, std::size_t count,
                                        runtime::Reduction op) {
  VDNN_EXPECTS(data != nullptr || count == 0, "all_reduce: no buffer for the elements");
  staged(stream, data, count * sizeof(float), [&](runtime::Stream& host, void* staging) {
    host_group_.all_reduce(host, static_cast<float*>(staging), count, op);
  });
}

void HostStagedCommunicator::broadcast(runtime::Stream& stream, void* data, std::size_t bytes) {
  VDNN_EXPECTS(data != nullptr || bytes == 0, "broadcast: no buffer for the bytes");
  staged(stream, data, bytes, [&](runtime::Stream& host, void* staging) {
    host_group_.broadcast(host, staging, bytes);
  });
}

void HostStagedCommunicator::staged(
    runtime::Stream& stream, void* data, std::size_t bytes,
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

}  // namespace vdnn::test
