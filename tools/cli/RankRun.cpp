// `vdnn train` as one rank of several: the communicator, the shared stop, the quiet loop.
#include "tools/cli/RankRun.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "models/train/Distributed.hpp"

namespace vdnn::tools {

std::unique_ptr<runtime::Communicator> join_run(const std::optional<runtime::LaunchConfig>& launch,
                                                const TrainOptions& o,
                                                models::TrainerOptions& options) {
  if (!launch) return nullptr;
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.nccl_timeout * 1e3));
  std::unique_ptr<runtime::Communicator> communicator =
      models::make_communicator({*launch, timeout, o.run.deterministic}, options.session.backend);
  options.session.executor.communicator = communicator.get();
  if (o.sync_bn) options.session.executor.batch_norm_communicator = communicator.get();
  if (communicator != nullptr) options.session.device = launch->local_rank;
  return communicator;
}

bool stopping(runtime::Communicator* communicator, const StopSignal& stop) {
  if (communicator == nullptr) return stop.requested();
  const std::vector<double> flags = communicator->all_gather(stop.requested() ? 1.0 : 0.0);
  return std::any_of(flags.begin(), flags.end(), [](double flag) { return flag != 0.0; });
}

std::string signal_name(const StopSignal& stop) {
  return stop.requested() ? stop.name() : "another rank's signal";
}

int train_quietly(models::Trainer& trainer, const TrainOptions& o) {
  const StopSignal stop;
  while (trainer.iteration() < o.iters) {
    trainer.step();
    const std::int64_t it = trainer.iteration();
    if (o.eval_every > 0 && (it % o.eval_every == 0 || it == o.iters)) trainer.evaluate();
    if (stopping(trainer.options().session.executor.communicator, stop)) {
      throw Interrupted(signal_name(stop) + " after iteration " + std::to_string(it) + " of " +
                        std::to_string(o.iters) + " (rank 0 wrote the checkpoint)");
    }
  }
  return 0;
}

}  // namespace vdnn::tools
