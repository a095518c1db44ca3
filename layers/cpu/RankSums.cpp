// RankSums: the communicator's all-reduce run inline, through a stream that does its work when
// it is enqueued (the layer already runs on the compute stream's worker).
#include "layers/cpu/RankSums.hpp"

#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "runtime/Error.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::layers::cpu {
namespace {

// A stream whose work completes inside the call that enqueues it.
class InlineStream final : public runtime::Stream {
 public:
  const std::string& name() const noexcept override { return name_; }
  void enqueue(std::function<void()> task) override { task(); }
  void copy_async(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void wait(const runtime::Event& /*event*/) override {
    throw runtime::InvalidArgument("the inline stream of a layer's collective takes no waits");
  }
  void synchronize() override {}

 private:
  std::string name_ = "batch norm ranks";
};

}  // namespace

void sum_over_ranks(runtime::Communicator* group, std::vector<double>& values) {
  if (group == nullptr || group->size() == 1) return;
  std::vector<float> sums(values.begin(), values.end());
  InlineStream stream;
  group->all_reduce(stream, sums.data(), sums.size(), runtime::Reduction::Sum);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = sums[i];
}

}  // namespace vdnn::layers::cpu
