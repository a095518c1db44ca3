// The libjpeg error callbacks that turn errors and corrupt-data warnings into a longjmp.
#include "models/data/image/JpegErrors.hpp"

#include <jerror.h>

#include <cstring>

namespace vdnn::models::detail {
namespace {

JpegErrorManager& manager_of(j_common_ptr cinfo) noexcept {
  return *reinterpret_cast<JpegErrorManager*>(cinfo->err);
}

[[noreturn]] void on_error(j_common_ptr cinfo) noexcept {
  JpegErrorManager& manager = manager_of(cinfo);
  (*cinfo->err->format_message)(cinfo, manager.message);
  std::longjmp(manager.jump, 1);
}

// Warnings that leave every pixel intact, which PIL ignores too: unknown Adobe transform or JFIF
// revision, a bad ICC marker, odd SOS parameters in a sequential file (some phone cameras write
// them), bytes between the last scan and the next marker (the scan was complete).
bool harmless_warning(int code) noexcept {
  return code == JWRN_ADOBE_XFORM || code == JWRN_JFIF_MAJOR || code == JWRN_BOGUS_ICC ||
         code == JWRN_NOT_SEQUENTIAL || code == JWRN_EXTRANEOUS_DATA;
}

void on_message(j_common_ptr cinfo, int level) noexcept {
  if (level >= 0 || harmless_warning(cinfo->err->msg_code)) return;  // traces, harmless ones
  manager_of(cinfo).truncated = cinfo->err->msg_code == JWRN_JPEG_EOF;
  on_error(cinfo);
}

void no_output(j_common_ptr /*cinfo*/) noexcept {}

}  // namespace

jpeg_error_mgr* install_jpeg_errors(JpegErrorManager& manager) noexcept {
  jpeg_std_error(&manager.pub);
  manager.pub.error_exit = on_error;
  manager.pub.emit_message = on_message;
  manager.pub.output_message = no_output;
  return &manager.pub;
}

void fail_jpeg(j_common_ptr cinfo, const char* message) noexcept {
  JpegErrorManager& manager = manager_of(cinfo);
  std::strncpy(manager.message, message, sizeof(manager.message) - 1);
  std::longjmp(manager.jump, 1);
}

}  // namespace vdnn::models::detail
