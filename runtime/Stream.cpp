// The operations every backend's stream composes from its primitives.
#include "runtime/Stream.hpp"

namespace vdnn::runtime {

void Stream::timed_copy(const TimedCopy& copy) {
  if (copy.after_stream != nullptr) {
    copy.mark->record(*copy.after_stream);
    wait(*copy.mark);
  }
  for (const Event* event : copy.after) {
    if (event != nullptr) wait(*event);
  }
  if (copy.started != nullptr) copy.started->record(*this);
  copy_async(copy.dst, copy.src, copy.bytes);
  if (copy.ended != nullptr) copy.ended->record(*this);
  copy.done->record(*this);
}

}  // namespace vdnn::runtime
