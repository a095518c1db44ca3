// The shared options of the training commands and their translation to the trainer's.
#include "tools/cli/RunOptions.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <string>

#include "graph/Layout.hpp"
#include "graph/Precision.hpp"
#include "layers/Optimizer.hpp"
#include "layers/Registry.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Device.hpp"
#include "tools/cli/Validators.hpp"

namespace vdnn::tools {
namespace {

void add_optimizer_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--lr", o.lr, "Base learning rate")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  cmd.add_option("--optimizer", o.optimizer,
                 "sgd (torch.optim.SGD), adamw (torch.optim.AdamW) or lars (SGD with LARS's "
                 "layer-wise trust ratio, apex's LARC)")
      ->capture_default_str()
      ->check(CLI::IsMember(layers::optimizer_names()));
  cmd.add_option("--momentum", o.momentum, "SGD and LARS momentum")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--dampening", o.dampening, "SGD and LARS dampening of the momentum")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_flag("--nesterov", o.nesterov,
               "SGD and LARS: Nesterov momentum (needs --momentum > 0 and --dampening 0)");
  cmd.add_option("--betas", o.betas, "AdamW's B1,B2 (each in [0, 1))")
      ->capture_default_str()
      ->delimiter(',')
      ->expected(2)
      ->check(finite_number())
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--adam-eps", o.adam_eps, "AdamW's eps")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  cmd.add_option("--lars-trust", o.lars_trust, "LARS's trust coefficient eta")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  cmd.add_option("--clip-grad-norm", o.clip_grad_norm,
                 "Clip the gradients' global L2 norm to N before each update, as "
                 "torch.nn.utils.clip_grad_norm_ (0: off)")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--label-smoothing", o.label_smoothing,
                 "Label smoothing of the cross-entropy loss, as torch.nn.CrossEntropyLoss")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_flag("--no-decay-bn-bias", o.no_decay_bn_bias,
               "No weight decay on 1-D parameters (biases, batch norm's weight and bias), the "
               "usual recipe for large batches");
  cmd.add_option("--weight-decay", o.weight_decay,
                 "Weight decay: L2 for SGD and LARS, decoupled for AdamW (which usually wants "
                 "0.01 to 0.05)")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--schedule", o.schedule, "Learning-rate schedule over the iterations")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "step", "cosine"}));
  cmd.add_option("--lr-warmup", o.lr_warmup,
                 "Steps of linear warmup from 0.01 x --lr before the schedule, which then runs "
                 "over the remaining steps")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--seed", o.seed, "Seed of initialization, data and dropout")
      ->capture_default_str();
}

void add_uvm_options(CLI::App& cmd, RunOptions& o, bool counters_default) {
  cmd.add_flag("--allow-oversubscription", o.allow_oversubscription,
               "UVM policies: allow more managed memory than the device has free (the driver "
               "pages under the kernels; this can hang a shared GPU)");
  o.count_migrations = counters_default;
  if (counters_default) {
    cmd.add_flag("!--no-migration-counters", o.count_migrations,
                 "UVM policies: do not read CUPTI's migration counters (report the plan's bytes)");
  } else {
    cmd.add_flag("--migration-counters", o.count_migrations,
                 "UVM policies: read CUPTI's migration counters (they cost ~20% throughput)");
  }
  cmd.add_option("--debug-device-free", o.debug_device_free,
                 "CPU backend: the free device memory the managed-memory guard sees, e.g. 1GiB");
}

// Throws runtime::InvalidArgument for a combination layers::validate refuses.
layers::OptimizerConfig optimizer_config(const RunOptions& o) {
  layers::OptimizerConfig c;
  c.kind = layers::parse_optimizer(o.optimizer);
  c.momentum = o.momentum;
  c.dampening = o.dampening;
  c.nesterov = o.nesterov;
  c.weight_decay = o.weight_decay;
  c.adam_beta1 = o.betas.at(0);
  c.adam_beta2 = o.betas.at(1);
  c.adam_eps = o.adam_eps;
  c.lars_trust = o.lars_trust;
  c.clip_grad_norm = o.clip_grad_norm;
  layers::validate(c);
  return c;
}

}  // namespace

void add_gpu_decode_share(CLI::App& cmd, double& share) {
  cmd.add_option("--gpu-decode-share", share,
                 "Image files with --decode gpu: the fraction of each batch the GPU decodes, in "
                 "(0, 1], spread over the batch; the workers make the rest")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0) & CLI::Validator(
                                         [](const std::string& text) {
                                           return std::stod(text) > 0.0 ? std::string()
                                                                        : "must be above 0";
                                         },
                                         "> 0"));
}

void add_tier_options(CLI::App& cmd, TierOptions& o) {
  cmd.add_option("--offload-peer", o.gpus,
                 "Offload feature maps first to a pool on this GPU, reached over NVLink or PCIe "
                 "peer access, and the rest to pinned host memory (needs --peer-budget)");
  cmd.add_option("--peer-budget", o.budget,
                 "With --offload-peer: the most bytes of feature maps on the peer GPU at once, "
                 "e.g. 8GiB");
  cmd.add_option("--host-budget", o.host_budget,
                 "The most pinned host memory offloaded feature maps may take at once, e.g. "
                 "64GiB; auto rebuilds what the host cannot hold (default: for train and compare, "
                 "what the machine has available less the run's other host memory and an eighth, "
                 "at least 4 GiB; for plan, no limit)");
}

graph::PeerTier peer_tier(const TierOptions& o) {
  if (o.gpus.empty() && o.budget.empty()) return {};
  if (o.gpus.empty() || o.budget.empty()) {
    throw runtime::InvalidArgument("--offload-peer and --peer-budget go together: give both");
  }
  if (o.gpus.find(',') != std::string::npos) {
    throw runtime::InvalidArgument("--offload-peer " + o.gpus +
                                   ": one peer GPU for now (the planner has one peer tier)");
  }
  std::size_t end = 0;
  int gpu = -1;
  try {
    gpu = std::stoi(o.gpus, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (end != o.gpus.size() || gpu < 0) {
    throw runtime::InvalidArgument("--offload-peer " + o.gpus + ": a GPU ordinal, e.g. 1");
  }
  const std::uint64_t budget = runtime::parse_bytes(o.budget);
  if (budget == 0) throw runtime::InvalidArgument("--peer-budget must be above 0");
  return {gpu, budget};
}

std::optional<std::uint64_t> host_budget(const TierOptions& o) {
  if (o.host_budget.empty()) return std::nullopt;
  return runtime::parse_bytes(o.host_budget);
}

void add_run_options(CLI::App& cmd, RunOptions& o, bool migration_counters_default) {
  add_optimizer_options(cmd, o);
  add_tier_options(cmd, o.tiers);
  cmd.add_option("--device", o.device, "auto: CUDA when a GPU is present, else CPU")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd.add_option("--data", o.data, "synthetic, cifar10:DIR, imagefolder:DIR or webdataset:PATTERN")
      ->capture_default_str();
  cmd.add_option("--augment", o.augment,
                 "Training images: crop-flip (a random crop of the image zero-padded by 4, then a "
                 "horizontal flip with p=0.5, seeded), imagenet (torchvision's RandomResizedCrop "
                 "to the input size, then the flip) or none; default crop-flip for cifar10, "
                 "imagenet for image files, none for synthetic")
      ->check(CLI::IsMember({"crop-flip", "imagenet", "none"}));
  cmd.add_flag("--skip-bad-images", o.skip_bad_images,
               "Image files: skip a file that cannot be read or decoded (a warning, and a count "
               "in summary.json) instead of stopping with an error naming it");
  cmd.add_option("--decode", o.decode,
                 "Image files: where JPEGs decode, cpu (worker threads), gpu (nvJPEG on the "
                 "hardware decoders, the CPU for what they do not take) or auto (gpu on CUDA "
                 "with nvJPEG when there are fewer than 10 decode threads)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
  cmd.add_option("--data-workers", o.data_workers,
                 "Image files: decode threads (0: the cores less two)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  add_gpu_decode_share(cmd, o.gpu_decode_share);
  add_uvm_options(cmd, o, migration_counters_default);
  cmd.add_option("--debug-stream-delays", o.debug_stream_delays,
                 "CPU backend: random delays on every stream operation, from this seed");
  cmd.add_flag("--debug-poison", o.debug_poison, "Fill freed and offloaded device memory with NaN");
  cmd.add_flag("--deterministic", o.deterministic,
               "CUDA: deterministic algorithms only (bitwise reproducible runs)");
  cmd.add_option("--math", o.math, "CUDA convolutions: tf32 (tensor cores) or fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"tf32", "fp32"}));
  cmd.add_option("--precision", o.precision,
                 "Feature maps and their gradients: fp32, or bf16 (channels-last on CUDA; FP32 "
                 "master weights, optimizer, batch-norm statistics and loss; tensor-core math with "
                 "FP32 accumulation; the CPU emulates bf16 storage)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd.add_flag("--no-fuse", o.no_fuse,
               "Keep batchnorm2d -> relu and batchnorm2d -> add -> relu chains as separate layers "
               "(to compare; fused by default)");
  cmd.add_option("--layout", o.layout,
                 "Memory order of feature maps on CUDA: nchw, nhwc (channels-last) or auto (nhwc "
                 "for TF32 convolutions on large maps without concatenations, else the faster of "
                 "a step measured in both at the first setup, kept in the setup cache); the CPU "
                 "runs nchw")
      ->capture_default_str()
      ->check(CLI::IsMember(graph::layout_choice_names()));
  CLI::Option* cache_dir = cmd.add_option(
      "--cost-cache", o.cost_cache,
      "Directory of the setup cache: measured convolution algorithms, layer "
      "and copy costs and layouts, per problem, network, batch and device, read instead of "
      "measuring at setup and written after it (default: $XDG_CACHE_HOME/vdnn, "
      "else ~/.cache/vdnn)");
  cmd.add_flag("--no-cache", o.no_cache,
               "No setup cache: measure convolution algorithms, costs and layouts at every "
               "setup")
      ->excludes(cache_dir);
  cmd.add_flag("--measure-costs", o.measure_costs,
               "Profile layer and copy costs at setup for any policy, so that the predicted step "
               "time is measured-based (auto and vdnn-dyn always do)");
}

layers::Backend resolve_device(const std::string& device) {
  if (device == "cpu") return layers::Backend::Cpu;
  if (device == "cuda") return layers::Backend::Cuda;
  const bool gpu = runtime::cuda_device_count() > 0 && layers::has_backend(layers::Backend::Cuda);
  return gpu ? layers::Backend::Cuda : layers::Backend::Cpu;
}

models::TrainerOptions trainer_options(const RunOptions& o, const std::string& policy,
                                       const std::string& budget, std::int64_t iterations,
                                       bool profile_layers) {
  models::TrainerOptions t;
  t.data = o.data;
  if (!o.augment.empty()) t.augment = models::parse_augment(o.augment);
  t.skip_bad_images = o.skip_bad_images;
  t.decode = models::parse_decode(o.decode);
  t.data_workers = static_cast<std::size_t>(o.data_workers);
  t.gpu_decode_share = o.gpu_decode_share;
  t.schedule.policy = graph::parse_lr_policy(o.schedule);
  t.schedule.base_lr = o.lr;
  t.schedule.total_steps = iterations;
  t.schedule.step_size = std::max<std::int64_t>(1, iterations / 3);
  t.schedule.warmup_steps = o.lr_warmup;
  graph::SessionOptions& s = t.session;
  s.backend = resolve_device(o.device);
  s.policy = graph::parse_policy(policy);
  s.budget_bytes = budget.empty() ? 0 : runtime::parse_bytes(budget);
  const graph::PeerTier peer = peer_tier(o.tiers);
  s.peer_device = peer.device;
  s.peer_budget_bytes = peer.budget_bytes;
  s.host_budget_bytes = host_budget(o.tiers);
  s.executor.seed = o.seed;
  s.executor.optimizer = optimizer_config(o);
  s.executor.poison_freed = o.debug_poison;
  s.executor.profile_layers = profile_layers;
  s.label_smoothing = o.label_smoothing;
  s.executor.decay_biases_and_norms = !o.no_decay_bn_bias;
  s.executor.allow_oversubscription = o.allow_oversubscription;
  s.executor.count_migrations = o.count_migrations;
  s.deterministic = o.deterministic;
  s.allow_tf32 = o.math == "tf32";
  s.precision = *graph::parse_precision(o.precision);
  s.stress.enabled = o.debug_stream_delays >= 0;
  s.stress.seed = static_cast<std::uint64_t>(o.debug_stream_delays);
  s.measure_costs = o.measure_costs;
  s.fuse = !o.no_fuse;
  s.layout = graph::parse_layout_choice(o.layout);
  if (!o.cost_cache.empty()) t.cache_dir = o.cost_cache;
  t.cache = !o.no_cache;
  if (!o.debug_device_free.empty()) {
    s.cpu_free_device_bytes = runtime::parse_bytes(o.debug_device_free);
  }
  return t;
}

}  // namespace vdnn::tools
