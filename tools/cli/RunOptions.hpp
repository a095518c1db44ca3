// The options every training command shares (`vdnn train`, `vdnn compare`): the optimizer, data,
// device and the debugging switches, and how they become a models::TrainerOptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/Planner.hpp"
#include "layers/Layer.hpp"
#include "models/train/Trainer.hpp"

namespace CLI {
class App;
}

namespace vdnn::tools {

/// The offload tiers' options (Note [Peer tier], Note [Host budget]), shared by train, compare and
/// plan.
struct TierOptions {
  std::string gpus;         // --offload-peer GPU[,GPU]; empty: no peer tier
  std::string budget;       // --peer-budget SIZE: the most bytes of maps on the peer at once
  std::string host_budget;  // --host-budget SIZE: the most pinned host memory; empty: default
};

/// Every default of a run's shared options lives here.
struct RunOptions {
  double lr = 0.05;
  std::string optimizer = "sgd";  // sgd | adamw | lars (layers::OptimizerConfig)
  double momentum = 0.9;
  double dampening = 0.0;
  bool nesterov = false;
  double weight_decay = 5e-4;
  std::vector<double> betas{0.9, 0.999};  // AdamW's (beta1, beta2)
  double adam_eps = 1e-8;
  double lars_trust = 0.001;
  double clip_grad_norm = 0.0;        // 0: off
  double label_smoothing = 0.0;       // the loss's
  bool no_decay_bn_bias = false;      // no weight decay on biases and batch norm parameters
  std::int64_t lr_warmup = 0;         // steps of linear warmup before the schedule
  std::string schedule = "constant";  // constant | step | cosine (over the run's iterations)
  std::uint64_t seed = 1;
  std::string device = "auto";     // auto | cpu | cuda
  std::string data = "synthetic";  // synthetic | cifar10:DIR
  std::string augment;             // crop-flip | imagenet | none; empty: models::default_augment
  bool skip_bad_images = false;
  std::string decode = "auto";    // image files: auto | cpu | gpu (models::Decode)
  std::int64_t data_workers = 0;  // image files: decode threads; 0: models::default_data_workers()
  double gpu_decode_share = 1.0;  // image files with GPU decode: its share of each batch
  std::int64_t debug_stream_delays = -1;  // >= 0: random stream delays from this seed (CPU)
  bool debug_poison = false;              // NaN-fill freed and offloaded device memory
  bool deterministic = false;             // CUDA: deterministic algorithms only
  std::string math = "tf32";              // CUDA convolutions: tf32 | fp32
  std::string precision = "fp32";         // feature maps: fp32 | bf16 (Note [Precision])
  bool allow_oversubscription = false;    // UVM: managed memory beyond the device's free memory
  bool count_migrations = true;           // UVM: CUPTI's migration counters each step
  std::string debug_device_free;          // CPU: free device memory the managed guard sees
  std::string cost_cache;                 // setup cache directory; "": the default
  bool no_cache = false;                  // no setup cache: measure at every setup
  bool measure_costs = false;             // measure costs for every policy (auto, dyn: always)
  bool no_fuse = false;                   // keep batchnorm2d -> [add ->] relu chains unfused
  std::string layout = "auto";            // nchw | nhwc | auto (CUDA: measured)
  TierOptions tiers;
};

/// Registers the shared options on `cmd`. `migration_counters_default` sets the UVM counters'
/// default: train counts them (--no-migration-counters), compare does not (--migration-counters)
/// because they cost a fifth of the throughput it compares.
void add_run_options(CLI::App& cmd, RunOptions& options, bool migration_counters_default);
/// --gpu-decode-share F into `share` (train's and data-bench's: the GPU's share of each batch of
/// image files with --decode gpu, in (0, 1]).
void add_gpu_decode_share(CLI::App& cmd, double& share);

/// Registers --offload-peer, --peer-budget and --host-budget on `cmd`.
void add_tier_options(CLI::App& cmd, TierOptions& options);
/// The peer tier `options` name (none when both are empty). Throws runtime::InvalidArgument when
/// only one is given, for a malformed GPU list or size, a zero budget, or more than one GPU (the
/// planner has one peer tier).
graph::PeerTier peer_tier(const TierOptions& options);
/// The host budget `options` name; unset when not given. Throws runtime::InvalidArgument for a
/// malformed size.
std::optional<std::uint64_t> host_budget(const TierOptions& options);

/// auto: CUDA when a GPU is present and this build has the CUDA backend, else CPU.
layers::Backend resolve_device(const std::string& device);

/// The trainer's options for a run of `iterations` steps of `policy` under `budget` ("" for
/// none). `profile_layers` times every layer (layers.json, traces). Throws
/// runtime::InvalidArgument for a malformed budget or size, or an optimizer setting that
/// layers::validate refuses (Nesterov without momentum, ...).
models::TrainerOptions trainer_options(const RunOptions& options, const std::string& policy,
                                       const std::string& budget, std::int64_t iterations,
                                       bool profile_layers);

}  // namespace vdnn::tools
