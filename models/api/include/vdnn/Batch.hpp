// Batches the caller makes: images of one element type and layout, in host memory or on the run's
// device, and their class labels (Trainer::step(const Batch&), DataSource).
#pragma once

#include <cstdint>

namespace vdnn {

/// The element type of images. U8: bytes 0..255 of image files, which a network taking image bytes
/// normalizes on its device (ImageNet's mean and std, as for `imagefolder:` data). F32: floats as
/// the network's first layer reads them. BF16: bfloat16 values as std::uint16_t bits (the upper
/// half of a float), read as those floats.
enum class ElementType : std::uint8_t { U8, F32, BF16 };

/// The order of an image batch in memory: NCHW (channels-first, PyTorch's) or NHWC (channels-last,
/// as image files decode).
enum class ImageLayout : std::uint8_t { NCHW, NHWC };

/// A batch the caller made (Trainer::step(const Batch&)): `size` images of channels x height x
/// width elements of `type` in `layout`, and `size` class indices in [0, num_classes).
///
/// The form: a network that takes floats (data that is not image files) takes F32 or BF16 in
/// either layout; a network that takes image bytes (`imagefolder:`/`webdataset:` data, or a
/// DataSource of U8) takes U8 in either layout. Anything else is an InvalidArgument: no U8 batch
/// is normalized by a network that takes floats, since the constants would be a guess.
///
/// Where it is: host memory (pageable or pinned; converted to the network input's form when it is
/// not in it, then uploaded), or with `on_device`, memory of the run's CUDA device (cudaMalloc or
/// managed), images and labels both. A device batch must be in the network input's form (F32 NCHW,
/// or U8 NHWC for a network that takes image bytes), and `stream` is the cudaStream_t (not null)
/// whose work wrote it: the run's compute stream waits for that stream's work queued so far (an
/// event, not a host wait) and reads the images in place, no copy (a policy that offloads the
/// input copies it to the host from there; the uvm policies, whose managed input memory the plan
/// migrates, copy the images into it on the device instead); the labels come to the host for the
/// loss's range checks.
/// Either way the caller's memory must stay valid and unchanged until step() returns; step()
/// returns after the loss is read, when nothing of the run reads the batch any more.
struct Batch {
  const void* images = nullptr;
  const std::int32_t* labels = nullptr;
  std::int64_t size = 0;
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  ElementType type = ElementType::F32;
  ImageLayout layout = ImageLayout::NCHW;
  bool on_device = false;  // images and labels in memory of the run's CUDA device
  void* stream = nullptr;  // with on_device: the cudaStream_t that wrote the batch
};

}  // namespace vdnn
