// The loader-only benchmark: an ImageDataset behind the background loader, as a training run
// stages batches, with each batch's upload timed on the device.
#include "tools/cli/DataBenchCommand.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "graph/Session.hpp"
#include "models/data/BatchLoader.hpp"
#include "models/data/ImageDataset.hpp"
#include "runtime/Error.hpp"
#include "tools/cli/RunOptions.hpp"

namespace vdnn::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kSlots = 3;  // as the trainer stages batches

double ms_per(double seconds, std::int64_t count) {
  return count > 0 ? seconds * 1e3 / static_cast<double>(count) : 0.0;
}

// What the GPU stage (if any) did since `before`.
models::GpuStageCounts gpu_counts_since(const models::GpuImageStage* gpu,
                                        const models::GpuStageCounts& before) {
  if (gpu == nullptr) return {};
  const models::GpuStageCounts now = gpu->counts();
  return {now.images - before.images, now.rejected - before.rejected, now.seconds - before.seconds};
}

}  // namespace

CLI::App* add_data_bench_command(CLI::App& app, DataBenchOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "data-bench",
      "Measure the input pipeline alone on image files: loader img/s and per-stage "
      "times (read, decode, resize, upload)");
  cmd->add_option("--data", o.data, "imagefolder:DIR or webdataset:PATTERN")->required();
  cmd->add_option("--batch", o.batch, "Images per batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--size", o.size, "Output side in pixels (the network's input)")
      ->capture_default_str()
      ->check(CLI::Range(8, 4096));
  cmd->add_option("--batches", o.batches, "Batches timed")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--warmup", o.warmup, "Batches drawn before timing")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--split", o.split, "train (random resized crops) or val (eval transform)")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "val"}));
  cmd->add_option("--device", o.device, "auto, cpu or cuda: where batches are uploaded")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--decode", o.decode,
                  "auto, cpu or gpu: where JPEGs decode (as train's --decode)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
  cmd->add_option("--workers", o.workers, "Decode threads (0: as train's --data-workers)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  add_gpu_decode_share(*cmd, o.gpu_decode_share);
  cmd->add_option("--json", o.json, "Also write the figures to this JSON file");
  return cmd;
}

int run_data_bench(const DataBenchOptions& o) {
  const bool test = o.split == "val";
  auto source =
      models::open_image_source(o.data, test ? models::Split::Test : models::Split::Train, false);
  const auto classes = static_cast<std::int64_t>(source->classes().size());
  graph::SessionOptions session;
  session.backend = resolve_device(o.device);
  const std::size_t workers =
      o.workers > 0 ? static_cast<std::size_t>(o.workers) : models::default_data_workers();
  const models::Decode decode = models::resolve_decode(
      models::parse_decode(o.decode), session.backend == layers::Backend::Cuda, workers);
  models::ImageDataset dataset(
      std::move(source), {3, o.size, o.size, classes},
      test ? models::Split::Test : models::Split::Train, 1,
      test ? models::Augment::None : models::Augment::ImageNet, workers, false,
      decode == models::Decode::Gpu ? models::make_gpu_image_stage(session.device, o.batch)
                                    : nullptr,
      o.gpu_decode_share);
  const std::unique_ptr<runtime::ExecutionContext> context = graph::make_context(session);
  const std::size_t bytes = static_cast<std::size_t>(o.batch * o.size * o.size * 3);
  std::vector<runtime::Buffer> slots;
  std::vector<void*> views;
  for (std::size_t i = 0; i < kSlots; ++i) {
    slots.emplace_back(context->pinned_upstream(), bytes);
    views.push_back(slots.back().data());
  }
  runtime::Buffer device(context->device_upstream(), bytes);
  const auto upload_start = context->make_event(true);
  const auto upload_end = context->make_event(true);
  models::BatchLoader loader(dataset, o.batch, views);
  double upload_seconds = 0.0;
  const auto draw = [&](bool timed) {
    const models::Batch batch = loader.next();
    upload_start->record(context->prefetch());
    context->prefetch().copy_async(device.data(), batch.images, bytes);
    upload_end->record(context->prefetch());
    context->prefetch().synchronize();
    if (timed) upload_seconds += upload_end->seconds_since(*upload_start);
  };
  for (std::int64_t b = 0; b < o.warmup; ++b) draw(false);
  const models::ImageStageSeconds before = dataset.stage_seconds();
  const models::GpuImageStage* gpu = dataset.gpu_stage();
  const models::GpuStageCounts gpu_before = gpu_counts_since(gpu, {});
  const auto start = Clock::now();
  for (std::int64_t b = 0; b < o.batches; ++b) draw(true);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const models::ImageStageSeconds after = dataset.stage_seconds();

  const std::int64_t images = o.batches * o.batch;
  const models::GpuStageCounts gpu_counts = gpu_counts_since(gpu, gpu_before);
  const nlohmann::json figures{
      {"data", dataset.description()},
      {"batch", o.batch},
      {"batches", o.batches},
      {"size", o.size},
      {"split", o.split},
      {"workers", workers},
      {"gpu_decode_share", o.gpu_decode_share},
      {"device", layers::backend_name(session.backend)},
      {"images_per_s", static_cast<double>(images) / seconds},
      {"read_ms_per_image", ms_per(after.read - before.read, images)},
      {"decode_ms_per_image", ms_per(after.decode - before.decode, images)},
      {"resize_ms_per_image", ms_per(after.resize - before.resize, images)},
      {"decode", models::decode_name(decode)},
      {"gpu_decoder", gpu != nullptr ? gpu->description() : ""},
      {"gpu_images", gpu_counts.images},
      {"gpu_rejected", gpu_counts.rejected},
      {"gpu_ms_per_batch", ms_per(gpu_counts.seconds, o.batches)},
      {"gpu_device_bytes", gpu != nullptr ? gpu->device_bytes() : 0},
      {"upload_ms_per_batch", ms_per(upload_seconds, o.batches)},
      {"upload_gbps",
       upload_seconds > 0.0
           ? static_cast<double>(bytes) * static_cast<double>(o.batches) / upload_seconds / 1e9
           : 0.0}};
  std::cout << "vdnn data-bench: " << dataset.description() << ", batch " << o.batch << ", "
            << o.size << "x" << o.size << ", " << workers << " workers, upload to "
            << figures["device"].get<std::string>()
            << "\n  loader: " << figures["images_per_s"].get<double>() << " img/s over "
            << o.batches << " batches\n  per image (worker time): read "
            << figures["read_ms_per_image"].get<double>() << " ms, decode "
            << figures["decode_ms_per_image"].get<double>() << " ms, resize "
            << figures["resize_ms_per_image"].get<double>() << " ms\n  GPU decode: "
            << (gpu != nullptr
                    ? gpu->description() + ", " + std::to_string(gpu_counts.images) + " images (" +
                          std::to_string(gpu_counts.rejected) + " handed back), " +
                          std::to_string(figures["gpu_ms_per_batch"].get<double>()) +
                          " ms per batch"
                    : std::string("off"))
            << "\n  upload: " << figures["upload_ms_per_batch"].get<double>() << " ms per batch ("
            << figures["upload_gbps"].get<double>() << " GB/s)\n";
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << figures.dump(2) << "\n";
    if (!out) throw runtime::Error("cannot write " + o.json);
  }
  return 0;
}

}  // namespace vdnn::tools
