// CodecSupport: what the JPEG and PNG codecs share: running a libjpeg/libpng call whose errors
// longjmp back (Note [Codec longjmp]) and the decompression-bomb check.
#pragma once

#include <csetjmp>
#include <cstdint>
#include <string>

#include "models/data/image/ImageDecoder.hpp"

namespace vdnn::models::detail {

// Note [Codec longjmp]
// libjpeg and libpng report errors by calling a handler that must not return; ours copies the
// message into a C struct and longjmps to `jump`. A longjmp that skips a C++ destructor is
// undefined behaviour, so run_guarded()'s body is a lambda holding only trivially destructible
// locals that calls the C library and writes into buffers allocated before it (a failed call
// leaves them to their owners). The library's own state is released by its RAII owner's
// destructor (jpeg_destroy_*, png_destroy_read_struct), which is valid after an error.

/// Runs `body()`; returns false when the library longjmped to `jump` instead. See Note [Codec
/// longjmp] for what `body` may hold.
template <typename Body>
bool run_guarded(std::jmp_buf& jump, Body&& body) {
  if (setjmp(jump) != 0) return false;
  body();
  return true;
}

/// Throws runtime::DataError when width x height is over limits.max_pixels (or either is not
/// positive), naming `name` and the claimed size.
void check_pixel_limit(const std::string& name, std::int64_t width, std::int64_t height,
                       const DecodeLimits& limits);

/// Throws runtime::InvalidArgument unless `box` is non-empty and inside a width x height image.
void check_box(const PixelBox& box, std::int64_t width, std::int64_t height);

}  // namespace vdnn::models::detail
