// PoolMemoryResource: one block taken from an upstream resource at construction and sub-allocated
// best-fit with coalescing; memory freed behind an event is reused only after that event.
// See Note [Deferred frees].
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "runtime/MemoryResource.hpp"

namespace vdnn::runtime {

// Deferred frees follow Note [Deferred frees] in docs/ARCHITECTURE.md.

/// Where a pool places an allocation among the free blocks that hold it (Note [Deferred frees]).
enum class BlockChoice : std::uint8_t {
  BestFit,       // the smallest, pending frees or not
  SettledFirst,  // the smallest whose front holds no pending free; else the one whose newest
                 // pending free is the oldest
};
const char* block_choice_name(BlockChoice choice) noexcept;

/// Takes one block of `capacity` bytes (rounded up to kAlignment) from `upstream` at construction
/// (the device budget, or the pinned-host arena the plan sized), sub-allocates from it, and returns
/// it at destruction; upstream is never called in between, so a training step asks nothing of the
/// system allocator. `upstream` must outlive the pool.
///
/// Placement is best fit: the smallest free block that holds the request rounded up to
/// kAlignment, the lowest address among equal sizes, carved from its front. Best fit rather than
/// address-ordered first fit because a training step frees and re-asks the same few feature-map
/// sizes: best fit reuses a freed block of the same size and keeps the large free blocks whole
/// for the large feature maps, where first fit would nibble at the lowest large block; it also
/// costs O(log n) through a size index where first fit scans. Freed blocks coalesce with free
/// neighbours at once. With BlockChoice::SettledFirst, a block whose front holds a pending free
/// (deallocate_after, not yet retired) is taken only when every fitting block holds one, and then
/// the one whose newest pending free is the oldest. allocate() waits for the events of the pending
/// frees it lands on.
///
/// allocate() throws OutOfMemory when no free block holds the request (its message names the
/// bytes asked, the bytes in use, the capacity and the largest free block) and leaves the pool
/// unchanged. Freeing a pointer the pool did not hand out, or with another size, is a bug:
/// deallocate() aborts with a message (it cannot throw), deallocate_after() throws
/// InvalidArgument. Thread-safe: every method holds one mutex, also while it waits for an event,
/// so an event must not depend on work that calls into this pool.
class PoolMemoryResource final : public MemoryResource {
 public:
  /// Throws what upstream.allocate() throws, or InvalidArgument when `capacity` cannot be rounded.
  PoolMemoryResource(MemoryResource& upstream, std::size_t capacity,
                     BlockChoice choice = BlockChoice::BestFit);
  /// Waits for every pending free's event, then returns the block to upstream.
  ~PoolMemoryResource() override;
  PoolMemoryResource(const PoolMemoryResource&) = delete;
  PoolMemoryResource& operator=(const PoolMemoryResource&) = delete;
  PoolMemoryResource(PoolMemoryResource&&) = delete;
  PoolMemoryResource& operator=(PoolMemoryResource&&) = delete;

  std::size_t capacity() const noexcept { return capacity_; }
  /// Sum of live allocations, each rounded up to kAlignment; pending frees do not count.
  std::size_t bytes_in_use() const;
  /// Size of the largest block an allocation could get now (pending frees count as free).
  std::size_t largest_free_block() const;
  /// Forgets every pending free whose event has completed, so the caller may destroy those events.
  /// Placement depends on which frees are pending: call it where every event has completed (the
  /// streams synchronized), so that placement never depends on timing.
  void retire_completed();
  /// Forgets every pending free without asking its event: only where the caller knows every event
  /// has completed (it synchronized the streams), to spare a query of the driver per free.
  void retire_all();

  /// The pending frees allocate() has landed on whose events had not completed, and the host
  /// seconds it spent waiting for them, so far.
  struct Waits {
    std::uint64_t count = 0;
    double seconds = 0.0;
  };
  Waits waits() const;

  bool host_accessible() const noexcept override { return upstream_.host_accessible(); }
  std::string name() const override { return "pool(" + upstream_.name() + ")"; }

 private:
  struct PendingFree {
    std::size_t bytes;
    const Event* event;
    std::uint64_t order;  // 1 for the pool's first free behind an event, then 2, ...
  };
  using FreeByOffset = std::map<std::size_t, std::size_t>;
  using FreeBySize = std::set<std::pair<std::size_t, std::size_t>>;  // (bytes, offset)

  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;
  void do_deallocate_after(void* ptr, std::size_t bytes, const Event& event) override;

  // The helpers below expect mutex_ to be held.
  std::optional<std::size_t> take_used(void* ptr, std::size_t bytes);
  std::string bad_free_message(void* ptr, std::size_t bytes) const;
  void add_free(std::size_t offset, std::size_t bytes);
  FreeByOffset::iterator erase_free(FreeByOffset::iterator block);
  void release(std::size_t offset, std::size_t bytes);
  FreeBySize::iterator choose_block(std::size_t bytes);
  bool holds_pending(std::size_t offset, std::size_t bytes) const;
  std::uint64_t newest_pending(std::size_t offset, std::size_t bytes) const;
  void wait_for_pending(std::size_t offset, std::size_t bytes);
  void retire_completed_locked();
  std::size_t largest_free_locked() const;

  MemoryResource& upstream_;
  const std::size_t capacity_;
  const BlockChoice choice_;
  std::byte* base_ = nullptr;
  mutable std::mutex mutex_;
  FreeByOffset free_by_offset_;  // offset -> bytes
  FreeBySize free_by_size_;
  std::unordered_map<std::size_t, std::size_t> used_;  // offset -> rounded bytes
  std::map<std::size_t, PendingFree> pending_;         // offset -> free behind an event
  std::size_t bytes_in_use_ = 0;
  std::uint64_t frees_after_ = 0;  // deallocate_after calls so far
  Waits waits_;
};

}  // namespace vdnn::runtime
