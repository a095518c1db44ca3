// The BatchResampler: a batch's filter tables and per-image pass descriptions packed on the host
// into one upload, and one kernel that runs either pass of every image of the batch with the CPU
// passes' integer arithmetic.
#include "models/data/image/cuda/BatchResampler.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::models::cuda {
namespace {

constexpr std::int32_t kHalf = 1 << (kWeightBits - 1);
constexpr unsigned int kBlockThreads = 256;
// The grid's y dimension is the image.
constexpr std::size_t kMaxBatch = 65535;

// One filter's tables in the device copy.
struct DeviceFilter {
  const std::int32_t* starts;
  const std::int32_t* weights;
  std::int32_t taps;
};

// One pass of one image: output byte (r, b) of rows x row_bytes, written densely to `out`, sums
// filter output f's taps, which lie `step` bytes apart from in + offset + starts[f] * step. The
// vertical pass filters output rows (f = r, offset = b, step = a row); the horizontal one output
// pixels (f = b / 3, offset = row r's channel b % 3, step = a pixel).
struct PassJob {
  const std::uint8_t* in;
  std::uint8_t* out;
  DeviceFilter filter;
  std::int64_t in_row_bytes;
  std::int32_t rows;
  std::int32_t row_bytes;
  bool vertical;
};

// One thread per output byte, blockIdx.y the image: neighbouring threads write neighbouring bytes
// and read neighbouring bytes of the same input rows, so both coalesce.
__global__ void resample_pass(const PassJob* jobs) {
  const PassJob& job = jobs[blockIdx.y];
  const auto row_bytes = static_cast<std::uint32_t>(job.row_bytes);
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= static_cast<std::uint32_t>(job.rows) * row_bytes) return;
  const std::uint32_t r = i / row_bytes;
  const std::uint32_t b = i - r * row_bytes;
  const std::uint32_t f = job.vertical ? r : b / 3;
  const std::int64_t step = job.vertical ? job.in_row_bytes : 3;
  const std::int64_t offset = job.vertical ? b : r * job.in_row_bytes + b % 3;
  const std::uint8_t* in = job.in + offset + job.filter.starts[f] * step;
  const std::int32_t* weights = job.filter.weights + static_cast<std::int64_t>(f) * job.filter.taps;
  std::int32_t sum = kHalf;
  for (std::int32_t t = 0; t < job.filter.taps; ++t) sum += in[t * step] * weights[t];
  // Bilinear weights are non-negative, so the sum is too.
  job.out[i] = static_cast<std::uint8_t>(std::min(sum >> kWeightBits, 255));
}

std::size_t table_entries(const AxisFilter& filter) {
  return filter.start.size() + filter.weights.size();
}

std::size_t table_entries(const ResizePlan& plan) {
  return table_entries(plan.horizontal) + table_entries(plan.vertical);
}

std::size_t first_pass_bytes(const ResizePlan& plan) {
  return static_cast<std::size_t>(plan.first_pass_rows() * plan.first_pass_row_bytes());
}

// The staging (and device) layout of a batch of n: the first passes' n jobs, the second passes'
// n jobs, then every image's tables as int32.
std::size_t jobs_bytes(std::size_t images) { return 2 * images * sizeof(PassJob); }

// Appends filter tables to the pinned staging, each where its device copy will be.
class TableWriter {
 public:
  TableWriter(void* staging, const void* device)
      : host_(static_cast<std::int32_t*>(staging)),
        device_(static_cast<const std::int32_t*>(device)) {}

  DeviceFilter append(const AxisFilter& filter) {
    const DeviceFilter placed{device_, device_ + filter.start.size(),
                              static_cast<std::int32_t>(filter.taps)};
    // Starts index a source of at most INT32_MAX bytes (check_image), so they fit.
    host_ = std::transform(filter.start.begin(), filter.start.end(), host_,
                           [](std::int64_t start) { return static_cast<std::int32_t>(start); });
    host_ = std::copy(filter.weights.begin(), filter.weights.end(), host_);
    device_ += table_entries(filter);
    return placed;
  }

 private:
  std::int32_t* host_;
  const std::int32_t* device_;
};

// The kernel indexes an image's bytes with 32 bits.
bool fits_kernel(std::int64_t bytes) { return bytes <= std::numeric_limits<std::int32_t>::max(); }

void check_image(std::size_t index, const DeviceRgbImage& source, const ResizePlan& plan,
                 std::int64_t out_stride) {
  // Built only for a message: the checks run for every image of every batch.
  const auto image = [index] { return "BatchResampler: image " + std::to_string(index); };
  VDNN_EXPECTS(source.pixels != nullptr && source.width > 0 && source.height > 0 &&
                   source.row_bytes >= source.width * 3,
               image() + " must be non-empty with rows of at least width * 3 bytes");
  VDNN_EXPECTS(plan.source_width == source.width && plan.source_height == source.height,
               image() + " is " + std::to_string(source.width) + " x " +
                   std::to_string(source.height) + ", its plan is for " +
                   std::to_string(plan.source_width) + " x " + std::to_string(plan.source_height));
  const std::int64_t out_bytes = plan.height * plan.width * 3;
  VDNN_EXPECTS(out_stride >= out_bytes, image() + "'s output is larger than out_stride");
  VDNN_EXPECTS(fits_kernel(source.row_bytes * source.height) && fits_kernel(out_bytes) &&
                   fits_kernel(plan.first_pass_rows() * plan.first_pass_row_bytes()),
               image() + " is too large: the kernel indexes 2 GiB");
}

// What a batch needs of the buffers, in bytes.
struct BatchNeeds {
  std::size_t tables = 0;
  std::size_t scratch = 0;
};

BatchNeeds check_batch(const std::vector<DeviceRgbImage>& sources,
                       const std::vector<ResizePlan>& plans, std::int64_t out_stride) {
  std::size_t entries = 0;
  BatchNeeds needs;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    check_image(i, sources[i], plans[i], out_stride);
    entries += table_entries(plans[i]);
    needs.scratch += first_pass_bytes(plans[i]);
  }
  needs.tables = jobs_bytes(sources.size()) + entries * sizeof(std::int32_t);
  return needs;
}

// The largest output of each pass of a batch, which sizes its grid.
struct PassSizes {
  std::int64_t first = 0;
  std::int64_t second = 0;
};

// Writes a batch's jobs and tables to `staging`, pointing at where they will lie in the device
// copy `tables` and at the first passes' outputs, one after another in `scratch`.
PassSizes pack_batch(const std::vector<DeviceRgbImage>& sources,
                     const std::vector<ResizePlan>& plans, std::uint8_t* out,
                     std::int64_t out_stride, void* staging, const void* tables,
                     std::uint8_t* scratch) {
  const std::size_t images = sources.size();
  auto* first_jobs = static_cast<PassJob*>(staging);
  PassJob* second_jobs = first_jobs + images;
  TableWriter writer(static_cast<char*>(staging) + jobs_bytes(images),
                     static_cast<const char*>(tables) + jobs_bytes(images));
  PassSizes sizes;
  for (std::size_t i = 0; i < images; ++i) {
    const DeviceRgbImage& source = sources[i];
    const ResizePlan& plan = plans[i];
    const DeviceFilter horizontal = writer.append(plan.horizontal);
    const DeviceFilter vertical = writer.append(plan.vertical);
    const std::int64_t rows = plan.first_pass_rows();
    const std::int64_t row_bytes = plan.first_pass_row_bytes();
    const std::uint8_t* origin =
        source.pixels + plan.origin_top * source.row_bytes + plan.origin_left * 3;
    first_jobs[i] = {origin,
                     scratch,
                     plan.vertical_first ? vertical : horizontal,
                     source.row_bytes,
                     static_cast<std::int32_t>(rows),
                     static_cast<std::int32_t>(row_bytes),
                     plan.vertical_first};
    second_jobs[i] = {scratch,
                      out + static_cast<std::int64_t>(i) * out_stride,
                      plan.vertical_first ? horizontal : vertical,
                      row_bytes,
                      static_cast<std::int32_t>(plan.height),
                      static_cast<std::int32_t>(plan.width * 3),
                      !plan.vertical_first};
    scratch += rows * row_bytes;
    sizes.first = std::max(sizes.first, rows * row_bytes);
    sizes.second = std::max(sizes.second, plan.height * plan.width * 3);
  }
  return sizes;
}

// Makes `buffer` at least `bytes` from `resource`, growing by half at least so that batches of
// slowly rising sizes reallocate rarely. Its contents are lost.
void reserve(runtime::Buffer& buffer, runtime::MemoryResource& resource, std::size_t bytes) {
  if (buffer.bytes() >= bytes) return;
  const std::size_t grown = std::max(bytes, buffer.bytes() + buffer.bytes() / 2);
  buffer.reset();
  buffer = runtime::Buffer(resource, grown);
}

// One pass of every image: a thread per byte of the largest output.
void launch_pass(cudaStream_t stream, const PassJob* jobs, std::size_t images,
                 std::int64_t max_bytes) {
  const dim3 grid(static_cast<unsigned int>((max_bytes + kBlockThreads - 1) / kBlockThreads),
                  static_cast<unsigned int>(images));
  resample_pass<<<grid, kBlockThreads, 0, stream>>>(jobs);
  VDNN_CHECK_LAUNCH();
}

}  // namespace

BatchResampler::BatchResampler() = default;

BatchResampler::~BatchResampler() { VDNN_CHECK_CUDA_NOTHROW(cudaEventSynchronize(resized_.get())); }

void BatchResampler::resize(cudaStream_t stream, const std::vector<DeviceRgbImage>& sources,
                            const std::vector<ResizePlan>& plans, std::uint8_t* out,
                            std::int64_t out_stride) {
  VDNN_EXPECTS(stream != nullptr, "vdnn never enqueues work on the NULL stream");
  VDNN_EXPECTS(sources.size() == plans.size(), "BatchResampler: " + std::to_string(sources.size()) +
                                                   " sources but " + std::to_string(plans.size()) +
                                                   " plans");
  VDNN_EXPECTS(sources.size() <= kMaxBatch,
               "BatchResampler: at most " + std::to_string(kMaxBatch) + " images a batch");
  const std::size_t images = sources.size();
  if (images == 0) return;
  VDNN_EXPECTS(out != nullptr, "BatchResampler: null output");
  const BatchNeeds needs = check_batch(sources, plans, out_stride);

  // The previous batch's kernels read the device buffers, its upload the staging.
  if (tables_.bytes() < needs.tables || scratch_.bytes() < needs.scratch) {
    resized_.synchronize();
    reserve(tables_, device_memory_, needs.tables);
    reserve(scratch_, device_memory_, needs.scratch);
  }
  uploaded_.synchronize();
  reserve(staging_, pinned_memory_, needs.tables);
  const PassSizes sizes = pack_batch(sources, plans, out, out_stride, staging_.data(),
                                     tables_.data(), static_cast<std::uint8_t*>(scratch_.data()));

  // After the previous batch's kernels, whichever stream they ran on: they read the tables and
  // the scratch that this batch rewrites.
  runtime::cuda::wait_event(stream, resized_);
  VDNN_CHECK_CUDA(cudaMemcpyAsync(tables_.data(), staging_.data(), needs.tables,
                                  cudaMemcpyHostToDevice, stream));
  uploaded_.record(stream);
  const auto* jobs = static_cast<const PassJob*>(tables_.data());
  launch_pass(stream, jobs, images, sizes.first);
  launch_pass(stream, jobs + images, images, sizes.second);
  resized_.record(stream);
}

}  // namespace vdnn::models::cuda
