// JpegErrors: the libjpeg error manager of vdnn's JPEG decoder and encoder: errors and
// pixel-losing warnings longjmp back instead of exit() or stderr (Note [Codec longjmp]).
#pragma once

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE
#include <jpeglib.h>
// clang-format on

#include <csetjmp>

namespace vdnn::models::detail {

/// One per libjpeg object, at a stable address (cinfo.err points into it).
struct JpegErrorManager {
  jpeg_error_mgr pub{};  // first: libjpeg's pointer to it is cast back to the whole
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};  // what went wrong, once a call failed
  bool truncated = false;              // the failure was libjpeg's premature-end warning
};

/// Sets up `manager` and returns the pointer for cinfo.err: errors, and every warning but those
/// that leave the pixels intact (unknown Adobe transform or JFIF revision, bad ICC marker, odd SOS
/// parameters, extraneous bytes before a marker), copy their message and longjmp to manager.jump;
/// trace messages are dropped; nothing is printed.
jpeg_error_mgr* install_jpeg_errors(JpegErrorManager& manager) noexcept;

/// Fails the libjpeg call in progress with `message` (longjmps to the manager's jump).
[[noreturn]] void fail_jpeg(j_common_ptr cinfo, const char* message) noexcept;

}  // namespace vdnn::models::detail
