// `vdnn data-bench`: the input pipeline alone on an image source: loader img/s and where the
// workers' time goes (Note [Image pipeline]).
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace vdnn::tools {

struct DataBenchOptions {
  std::string data;  // imagefolder:DIR or webdataset:PATTERN
  std::int64_t batch = 256;
  std::int64_t size = 224;    // output side
  std::int64_t batches = 20;  // timed, after warmup
  std::int64_t warmup = 2;
  std::string split = "train";
  std::string device = "auto";
  std::string decode = "auto";    // models::Decode
  std::int64_t workers = 0;       // 0: models::default_data_workers()
  double gpu_decode_share = 1.0;  // --decode gpu: its share of each batch
  std::string json;               // also write the figures here
};

CLI::App* add_data_bench_command(CLI::App& app, DataBenchOptions& options);

/// Draws batches as training would (the background loader, three pinned staging slots, each batch
/// uploaded to the device on CUDA) and prints the loader's img/s, the workers' time per image per
/// stage (read, decode, resize), the GPU decoder's share and the upload's. Throws what the source
/// throws (runtime::DataError naming a bad file) and runtime::InvalidArgument for bad options.
int run_data_bench(const DataBenchOptions& options);

}  // namespace vdnn::tools
