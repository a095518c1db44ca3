// The CUPTI activity-API collector behind make_cupti_migration_counters: the one process-wide
// route from CUPTI's buffer callbacks to the live collector, and the sums collect() hands out.
#include "runtime/cuda/CuptiMigrationCounters.hpp"

#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include "runtime/Device.hpp"
#include "runtime/Error.hpp"

namespace vdnn::runtime::cuda {
namespace {

// CUPTI's name for `status` ("CUPTI_ERROR_..."), or "unknown".
const char* result_name(CUptiResult status) noexcept {
  const char* name = nullptr;
  if (cuptiGetResultString(status, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown";
  return name;
}

[[noreturn]] void throw_cupti_error(CUptiResult status, const char* statement, const char* file,
                                    int line) {
  throw CudaError(std::string(statement) + " failed at " + file + ":" + std::to_string(line) +
                  ": CUPTI error " + result_name(status) + " (" +
                  std::to_string(static_cast<int>(status)) + ")");
}

void log_cupti_error(CUptiResult status, const char* statement, const char* file,
                     int line) noexcept {
  std::fprintf(stderr, "vdnn: %s failed at %s:%d: CUPTI error %s (%d)\n", statement, file, line,
               result_name(status), static_cast<int>(status));
}

// The CUPTI members of the VDNN_CHECK_* family, local to this file (the only CUPTI user).
#define VDNN_CHECK_CUPTI(stmt)                                         \
  do {                                                                 \
    const CUptiResult vdnn_cupti_status = (stmt);                      \
    if (vdnn_cupti_status != CUPTI_SUCCESS)                            \
      throw_cupti_error(vdnn_cupti_status, #stmt, __FILE__, __LINE__); \
  } while (false)
#define VDNN_CHECK_CUPTI_NOTHROW(stmt)                               \
  do {                                                               \
    const CUptiResult vdnn_cupti_status = (stmt);                    \
    if (vdnn_cupti_status != CUPTI_SUCCESS)                          \
      log_cupti_error(vdnn_cupti_status, #stmt, __FILE__, __LINE__); \
  } while (false)

// Note [CUPTI is process-wide]
// CUPTI's activity API has one set of buffer callbacks, one set of enabled activity kinds and one
// unified-memory counter configuration per process, and the callbacks are plain C function
// pointers that carry no user data. The records can therefore reach a collector only through
// process-wide state: the Route below, guarded by its mutex. It is the one exception to "nothing
// global" in vdnn, and a narrow one: it mirrors state CUPTI already holds globally, owns no CUDA
// object (so nothing in it outlives a context), and only a live collector uses it. Because
// CUPTI's configuration is shared, at most one collector lives at a time; the factory refuses a
// second. The destructor flushes and disables the activity kind and releases the route, so
// collectors can follow one another. The buffer callbacks stay registered (CUPTI cannot
// unregister them); with no collector alive they only free the buffers they are handed.
struct Route {
  std::mutex mutex;
  bool claimed = false;            // a collector is alive, or a factory call is setting one up
  std::uint32_t device = 0;        // the collector's device, as CUPTI numbers it (the ordinal)
  MigrationTraffic pending;        // what arrived since the last collect()
  std::uint64_t lost_records = 0;  // dropped by CUPTI or unreadable since the last collect()
};

// Never destroyed: CUPTI may still hand back buffers from its own exit-time flush.
Route& route() {
  static Route* const instance = new Route();
  return *instance;
}

// Activity buffers: CUPTI asks for one whenever it needs room and hands it back full (or
// flushed); each is one aligned allocation, freed once its records are read.
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
constexpr std::size_t kRecordAlignment = 8;  // what CUPTI requires of activity buffers

void CUPTIAPI request_buffer(std::uint8_t** buffer, std::size_t* size,
                             std::size_t* max_records) noexcept {
  // Null declines the request: CUPTI then drops records and counts them (see lost_records).
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void add_record(const CUpti_ActivityUnifiedMemoryCounter3& record, std::uint32_t device,
                MigrationTraffic& sum) noexcept {
  const double seconds =
      record.end > record.start ? static_cast<double>(record.end - record.start) * 1e-9 : 0.0;
  switch (record.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
      if (record.dstId != device) return;
      sum.to_device_bytes += record.value;
      sum.to_device_seconds += seconds;
      return;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
      if (record.srcId != device) return;
      sum.to_host_bytes += record.value;
      sum.to_host_seconds += seconds;
      return;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
      if (record.srcId != device) return;
      sum.gpu_page_faults += record.value;
      return;
    default:
      return;
  }
}

void CUPTIAPI complete_buffer(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                              std::size_t /*size*/, std::size_t valid_size) noexcept {
  Route& r = route();
  std::uint32_t device = 0;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    device = r.device;
  }
  // Sum outside the lock: collect() may be waiting in cuptiActivityFlushAll for this callback.
  MigrationTraffic sum;
  std::uint64_t lost = 0;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (status != CUPTI_SUCCESS) {
      log_cupti_error(status, "cuptiActivityGetNextRecord", __FILE__, __LINE__);
      ++lost;
      break;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) {
      add_record(*reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record), device,
                 sum);
    }
  }
  std::size_t dropped = 0;
  VDNN_CHECK_CUPTI_NOTHROW(cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped));
  lost += dropped;
  std::free(buffer);  // NOLINT(cppcoreguidelines-no-malloc): CUPTI hands the buffer back here

  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.claimed) return;  // no collector: nobody asked for these records
  r.pending += sum;
  r.lost_records += lost;
}

// The refusals that mean "no counters here" rather than "something broke", as the sentence the
// factory reports; nullptr for any other status. Each "not supported" case says so literally.
const char* unavailable_reason(CUptiResult status) noexcept {
  switch (status) {
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED:
      return "CUPTI: unified memory profiling not supported on this platform or driver";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE:
      return "CUPTI: unified memory profiling not supported on this device";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES:
      return "CUPTI: unified memory profiling not supported on GPUs without peer access";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS:
      return "CUPTI: unified memory profiling not supported under MPS";
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return "CUPTI: unified memory profiling not supported on this device";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "CUPTI: this process may not profile the GPU (insufficient privileges)";
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "CUPTI: another profiler holds CUPTI in this process";
    default:
      return nullptr;
  }
}

// Empty when `status` is success; the sentence for the factory's caller, ending in CUPTI's name
// for the status, when it is a refusal; throws CudaError for any other failure of `statement`.
std::string refusal(CUptiResult status, const char* statement, int line) {
  if (status == CUPTI_SUCCESS) return {};
  const char* reason = unavailable_reason(status);
  if (reason == nullptr) throw_cupti_error(status, statement, __FILE__, line);
  return std::string(reason) + " (" + result_name(status) + ")";
}

class CuptiMigrationCounters final : public MigrationCounters {
 public:
  CuptiMigrationCounters() = default;
  CuptiMigrationCounters(const CuptiMigrationCounters&) = delete;
  CuptiMigrationCounters& operator=(const CuptiMigrationCounters&) = delete;
  CuptiMigrationCounters(CuptiMigrationCounters&&) = delete;
  CuptiMigrationCounters& operator=(CuptiMigrationCounters&&) = delete;

  // Flushes what is left, then stops collection and releases the route (Note [CUPTI is
  // process-wide]). Records still on their way are dropped: nobody can collect them.
  ~CuptiMigrationCounters() override {
    VDNN_CHECK_CUPTI_NOTHROW(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    VDNN_CHECK_CUPTI_NOTHROW(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
    VDNN_CHECK_CUPTI_NOTHROW(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    Route& r = route();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.claimed = false;
    r.pending = MigrationTraffic{};
    r.lost_records = 0;
  }

  MigrationTraffic collect() override {
    // Forced: the caller has synchronized, so every record is final; a default flush would hold
    // back a buffer that is merely not full.
    VDNN_CHECK_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    Route& r = route();
    std::lock_guard<std::mutex> lock(r.mutex);
    const std::uint64_t lost = std::exchange(r.lost_records, 0);
    MigrationTraffic traffic = std::exchange(r.pending, MigrationTraffic{});
    if (lost != 0) {
      throw CudaError("CUPTI lost " + std::to_string(lost) +
                      " unified-memory records (an activity buffer could not be allocated or "
                      "read): the migration counts of this interval are incomplete");
    }
    return traffic;
  }
};

// Releases the route unless dismissed: the factory's way out on refusal or error.
class ClaimGuard {
 public:
  ClaimGuard() = default;
  ClaimGuard(const ClaimGuard&) = delete;
  ClaimGuard& operator=(const ClaimGuard&) = delete;
  ClaimGuard(ClaimGuard&&) = delete;
  ClaimGuard& operator=(ClaimGuard&&) = delete;
  ~ClaimGuard() {
    if (!armed_) return;
    Route& r = route();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.claimed = false;
  }
  void dismiss() noexcept { armed_ = false; }

 private:
  bool armed_ = true;
};

// Note [Collector before allocations]
// Measured on the H200 test machine (driver 580.159.04, CUDA 13.0, 2026-11-23): the process's
// first collector, made after 64 MiB of managed memory had been allocated and populated, reported
// no record at all (prefetches to the host and back, demand faults from a kernel, a cudaMemcpy:
// all zero, also 500 ms later). In the same process a later collector, made before its 64 MiB
// were allocated, counted their host-to-device prefetch in full. That run could not tell "the
// range predates the collector" from "the first collector of a process misses records"; CUPTI
// documents neither. The rule that held: make the collector before the managed allocations it is
// to watch.

}  // namespace

std::unique_ptr<MigrationCounters> make_cupti_migration_counters(int ordinal,
                                                                 std::string* why_not) {
  const auto refuse = [why_not](std::string reason) -> std::unique_ptr<MigrationCounters> {
    if (why_not != nullptr) *why_not = std::move(reason);
    return nullptr;
  };
  // Also initializes the CUDA driver, which CUPTI's counter configuration needs.
  const int count = cuda_device_count();
  if (count == 0) return refuse("no CUDA device");
  VDNN_EXPECTS(ordinal >= 0 && ordinal < count, "no CUDA device " + std::to_string(ordinal) + ": " +
                                                    std::to_string(count) + " visible");
  Route& r = route();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.claimed) return refuse("another collector is active in this process");
    r.claimed = true;
    r.device = static_cast<std::uint32_t>(ordinal);
    r.pending = MigrationTraffic{};
    r.lost_records = 0;
  }
  // CUPTI is called without the route's lock: its calls may wait for the buffer callbacks,
  // which take that lock.
  ClaimGuard guard;
  VDNN_CHECK_CUPTI(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer));

  CUpti_ActivityUnifiedMemoryCounterConfig config[3] = {};
  const CUpti_ActivityUnifiedMemoryCounterKind kinds[3] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT};
  for (int i = 0; i < 3; ++i) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config[i].kind = kinds[i];
    config[i].deviceId = static_cast<std::uint32_t>(ordinal);
    config[i].enable = 1;
  }
  std::string refused = refusal(cuptiActivityConfigureUnifiedMemoryCounter(config, 3),
                                "cuptiActivityConfigureUnifiedMemoryCounter(config, 3)", __LINE__);
  if (refused.empty()) {
    refused = refusal(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER),
                      "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)", __LINE__);
  }
  if (!refused.empty()) return refuse(std::move(refused));

  auto counters = std::make_unique<CuptiMigrationCounters>();
  guard.dismiss();
  return counters;
}

}  // namespace vdnn::runtime::cuda
