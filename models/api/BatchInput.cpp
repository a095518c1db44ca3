// A caller's batch checked against the run and reordered or widened into the network's input form.
#include "models/api/BatchInput.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/BFloat16.hpp"
#include "runtime/Device.hpp"
#include "runtime/Error.hpp"

namespace vdnn::api {
namespace {

using runtime::InvalidArgument;

const char* type_name(ElementType type) {
  switch (type) {
    case ElementType::U8:
      return "u8";
    case ElementType::F32:
      return "f32";
    case ElementType::BF16:
      return "bf16";
  }
  return "an unknown element type";
}

// What the network's first layer reads: image bytes, channels-last (Note [Image input]), or floats.
ElementType input_type(const graph::Graph& graph) {
  return graph.image_input() ? ElementType::U8 : ElementType::F32;
}

ImageLayout input_layout(const graph::Graph& graph) {
  return graph.image_input() ? ImageLayout::NHWC : ImageLayout::NCHW;
}

std::string shape_text(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" +
         std::to_string(w);
}

void check_form(const Batch& batch, const graph::Graph& graph, const std::string& what) {
  const bool takes_bytes = graph.image_input();
  if ((batch.type == ElementType::U8) != takes_bytes) {
    throw InvalidArgument(
        what + ": the batch is " + type_name(batch.type) + " but this run's network takes " +
        (takes_bytes ? "image bytes (u8: its data is image files or a u8 DataSource)"
                     : "floats (f32 or bf16; u8 batches go to networks that normalize bytes: "
                       "image-file data or a u8 DataSource)"));
  }
  if (batch.layout != ImageLayout::NCHW && batch.layout != ImageLayout::NHWC) {
    throw InvalidArgument(what + ": the batch's layout is neither NCHW nor NHWC");
  }
}

void check_memory(const Batch& batch, models::Trainer& trainer, const std::string& what) {
  const graph::SessionOptions& run = trainer.options().session;
  const int images = runtime::cuda_device_of(batch.images);
  const int labels = runtime::cuda_device_of(batch.labels);
  if (!batch.on_device) {
    if (images >= 0 || labels >= 0) {
      throw InvalidArgument(what +
                            ": the batch is in CUDA device memory; mark it on_device (on a "
                            "CUDA run) and give the stream that wrote it");
    }
    return;
  }
  if (run.backend != layers::Backend::Cuda) {
    throw InvalidArgument(what + ": an on_device batch needs a CUDA run; this one is on the CPU");
  }
  if (batch.stream == nullptr) {
    throw InvalidArgument(what + ": an on_device batch needs the stream that wrote it, not null");
  }
  if (images != run.device || labels != run.device) {
    throw InvalidArgument(what +
                          ": the batch is marked on_device but its images or labels are "
                          "not memory of the run's device " +
                          std::to_string(run.device));
  }
  const graph::Graph& graph = trainer.session().graph();
  if (batch.type != input_type(graph) || batch.layout != input_layout(graph)) {
    throw InvalidArgument(what + ": an on_device batch must be in the network input's form, " +
                          (graph.image_input() ? "u8 NHWC" : "f32 NCHW"));
  }
}

// Element (n, c, h, w) of a batch of `dims` (N, C, H, W) stored in `layout`.
std::size_t offset(ImageLayout layout, const runtime::Shape& dims, std::int64_t n, std::int64_t c,
                   std::int64_t h, std::int64_t w) {
  const std::int64_t i = layout == ImageLayout::NCHW
                             ? ((n * dims[1] + c) * dims[2] + h) * dims[3] + w
                             : ((n * dims[2] + h) * dims[3] + w) * dims[1] + c;
  return static_cast<std::size_t>(i);
}

// dst (in `to`) = convert(src (in `from`)), element by element.
template <typename Src, typename Dst, typename Convert>
void relayout(const Src* src, ImageLayout from, Dst* dst, ImageLayout to,
              const runtime::Shape& dims, Convert convert) {
  for (std::int64_t n = 0; n < dims[0]; ++n) {
    for (std::int64_t c = 0; c < dims[1]; ++c) {
      for (std::int64_t h = 0; h < dims[2]; ++h) {
        for (std::int64_t w = 0; w < dims[3]; ++w) {
          dst[offset(to, dims, n, c, h, w)] = convert(src[offset(from, dims, n, c, h, w)]);
        }
      }
    }
  }
}

}  // namespace

void check_batch(const Batch& batch, models::Trainer& trainer, const char* what) {
  const graph::Graph& graph = trainer.session().graph();
  const runtime::Shape& input = graph.input_shape();
  const std::string name = what;
  if (batch.images == nullptr || batch.labels == nullptr) {
    throw InvalidArgument(name + ": the batch needs images and labels");
  }
  if (batch.size != graph.batch() || batch.channels != input[1] || batch.height != input[2] ||
      batch.width != input[3]) {
    throw InvalidArgument(name + ": the batch is " +
                          shape_text(batch.size, batch.channels, batch.height, batch.width) +
                          " but the run takes " +
                          shape_text(graph.batch(), input[1], input[2], input[3]) +
                          " (batch x channels x height x width)");
  }
  check_form(batch, graph, name);
  check_memory(batch, trainer, name);
}

const void* network_input(const Batch& batch, const graph::Graph& graph,
                          std::vector<std::byte>& scratch) {
  const ImageLayout to = input_layout(graph);
  if (batch.type == input_type(graph) && batch.layout == to) return batch.images;
  const runtime::Shape& dims = graph.input_shape();
  scratch.resize(graph.tensor_bytes(graph::kNetworkInput));
  if (batch.type == ElementType::U8) {
    relayout(static_cast<const std::uint8_t*>(batch.images), batch.layout,
             reinterpret_cast<std::uint8_t*>(scratch.data()), to, dims,
             [](std::uint8_t v) { return v; });
  } else if (batch.type == ElementType::BF16) {
    relayout(static_cast<const std::uint16_t*>(batch.images), batch.layout,
             reinterpret_cast<float*>(scratch.data()), to, dims,
             [](std::uint16_t bits) { return runtime::to_float(runtime::BFloat16{bits}); });
  } else {
    relayout(static_cast<const float*>(batch.images), batch.layout,
             reinterpret_cast<float*>(scratch.data()), to, dims, [](float v) { return v; });
  }
  return scratch.data();
}

}  // namespace vdnn::api
