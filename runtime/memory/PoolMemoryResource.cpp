// Best-fit sub-allocation from one upstream block, with coalescing and event-gated reuse of
// deferred frees (Note [Deferred frees]).
#include "runtime/memory/PoolMemoryResource.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>

#include "runtime/Error.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::runtime {
const char* block_choice_name(BlockChoice choice) noexcept {
  return choice == BlockChoice::SettledFirst ? "settled-first" : "best-fit";
}

PoolMemoryResource::PoolMemoryResource(MemoryResource& upstream, std::size_t capacity,
                                       BlockChoice choice)
    : upstream_(upstream), capacity_(MemoryResource::align_up(capacity)), choice_(choice) {
  VDNN_EXPECTS(capacity_ >= capacity,
               "pool capacity " + std::to_string(capacity) + " overflows when aligned");
  // The free list is built first so that nothing can throw once the upstream block is held.
  if (capacity_ > 0) add_free(0, capacity_);
  base_ = static_cast<std::byte*>(upstream_.allocate(capacity_));
}

PoolMemoryResource::~PoolMemoryResource() {
  // Queued work may still read pending blocks; upstream must not reuse them before it is done.
  for (const auto& [offset, pending] : pending_) {
    try {
      pending.event->synchronize();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s: waiting for a pending free at offset %zu failed: %s\n",
                   name().c_str(), offset, error.what());
    }
  }
  upstream_.deallocate(base_, capacity_);
}

std::size_t PoolMemoryResource::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_in_use_;
}

std::size_t PoolMemoryResource::largest_free_block() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return largest_free_locked();
}

void PoolMemoryResource::retire_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  retire_completed_locked();
}

void PoolMemoryResource::retire_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.clear();
}

PoolMemoryResource::Waits PoolMemoryResource::waits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waits_;
}

void* PoolMemoryResource::do_allocate(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Comparing before aligning keeps align_up from overflowing on absurd requests.
  const auto fit =
      bytes <= capacity_ ? choose_block(MemoryResource::align_up(bytes)) : free_by_size_.end();
  if (fit == free_by_size_.end()) {
    throw OutOfMemory(name() + ": cannot allocate " + std::to_string(bytes) +
                          " bytes: " + std::to_string(bytes_in_use_) + " of " +
                          std::to_string(capacity_) + " bytes in use, largest free block " +
                          std::to_string(largest_free_locked()) + " bytes (" +
                          std::to_string(capacity_ - bytes_in_use_) + " free in total)",
                      bytes, bytes_in_use_, capacity_);
  }
  const auto [block_bytes, offset] = *fit;
  const std::size_t size = MemoryResource::align_up(bytes);
  // Waiting comes before any change, so a wait that throws leaves the pool as it was.
  wait_for_pending(offset, size);
  used_.emplace(offset, size);
  free_by_size_.erase(fit);
  free_by_offset_.erase(offset);
  // The block was coalesced, so its remainder borders no free block.
  if (block_bytes > size) add_free(offset + size, block_bytes - size);
  bytes_in_use_ += size;
  return base_ + offset;
}

void PoolMemoryResource::do_deallocate(void* ptr, std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::optional<std::size_t> offset = take_used(ptr, bytes);
  if (!offset) {
    std::fprintf(stderr, "%s\n", bad_free_message(ptr, bytes).c_str());
    std::abort();
  }
  release(*offset, MemoryResource::align_up(bytes));
}

void PoolMemoryResource::do_deallocate_after(void* ptr, std::size_t bytes, const Event& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Pending until an allocation takes the range or the owner retires it, whether or not the event
  // has completed: placement never depends on timing (Note [Deferred frees]).
  const std::optional<std::size_t> offset = take_used(ptr, bytes);
  if (!offset) throw InvalidArgument(bad_free_message(ptr, bytes));
  const std::size_t size = MemoryResource::align_up(bytes);
  pending_.emplace(*offset, PendingFree{size, &event, ++frees_after_});
  release(*offset, size);
}

std::optional<std::size_t> PoolMemoryResource::take_used(void* ptr, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  const auto base = reinterpret_cast<std::uintptr_t>(base_);
  if (address < base || address >= base + capacity_) return std::nullopt;
  const auto used = used_.find(address - base);
  if (used == used_.end() || used->second != MemoryResource::align_up(bytes)) return std::nullopt;
  used_.erase(used);
  return address - base;
}

std::string PoolMemoryResource::bad_free_message(void* ptr, std::size_t bytes) const {
  char address[32];
  std::snprintf(address, sizeof(address), "%p", ptr);
  return name() + ": free of " + address + " (" + std::to_string(bytes) +
         " bytes), which is not a live allocation of that size from this pool";
}

void PoolMemoryResource::add_free(std::size_t offset, std::size_t bytes) {
  free_by_offset_.emplace(offset, bytes);
  free_by_size_.emplace(bytes, offset);
}

PoolMemoryResource::FreeByOffset::iterator PoolMemoryResource::erase_free(
    FreeByOffset::iterator block) {
  free_by_size_.erase({block->second, block->first});
  return free_by_offset_.erase(block);
}

void PoolMemoryResource::release(std::size_t offset, std::size_t bytes) {
  bytes_in_use_ -= bytes;
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && next->first == offset + bytes) {
    bytes += next->second;
    next = erase_free(next);
  }
  if (next != free_by_offset_.begin()) {
    const auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      offset = previous->first;
      bytes += previous->second;
      erase_free(previous);
    }
  }
  add_free(offset, bytes);
}

PoolMemoryResource::FreeBySize::iterator PoolMemoryResource::choose_block(std::size_t bytes) {
  const auto best_fit = free_by_size_.lower_bound({bytes, 0});
  if (choice_ == BlockChoice::BestFit || best_fit == free_by_size_.end()) return best_fit;
  for (auto block = best_fit; block != free_by_size_.end(); ++block) {
    if (!holds_pending(block->second, bytes)) return block;
  }
  // Every fitting block holds a pending free at its front: the one whose newest is the oldest.
  auto chosen = best_fit;
  std::uint64_t chosen_newest = newest_pending(best_fit->second, bytes);
  for (auto block = std::next(best_fit); block != free_by_size_.end(); ++block) {
    const std::uint64_t newest = newest_pending(block->second, bytes);
    if (newest < chosen_newest) {
      chosen = block;
      chosen_newest = newest;
    }
  }
  return chosen;
}

// Pending frees lie inside free blocks and `offset` starts one, so none begins before it.
bool PoolMemoryResource::holds_pending(std::size_t offset, std::size_t bytes) const {
  const auto pending = pending_.lower_bound(offset);
  return pending != pending_.end() && pending->first < offset + bytes;
}

std::uint64_t PoolMemoryResource::newest_pending(std::size_t offset, std::size_t bytes) const {
  std::uint64_t newest = 0;
  for (auto pending = pending_.lower_bound(offset);
       pending != pending_.end() && pending->first < offset + bytes; ++pending) {
    newest = std::max(newest, pending->second.order);
  }
  return newest;
}

void PoolMemoryResource::wait_for_pending(std::size_t offset, std::size_t bytes) {
  auto pending = pending_.lower_bound(offset);
  while (pending != pending_.end() && pending->first < offset + bytes) {
    if (!pending->second.event->query()) {
      const auto start = std::chrono::steady_clock::now();
      pending->second.event->synchronize();
      ++waits_.count;
      waits_.seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    pending = pending_.erase(pending);
  }
}

std::size_t PoolMemoryResource::largest_free_locked() const {
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

void PoolMemoryResource::retire_completed_locked() {
  for (auto pending = pending_.begin(); pending != pending_.end();) {
    pending = pending->second.event->query() ? pending_.erase(pending) : std::next(pending);
  }
}

}  // namespace vdnn::runtime
