#pragma once
// Memory in quanta. Rounding is explicit and named, because it is the whole point: a request is rounded UP
// (a process never gets less than it asked for), a machine is rounded DOWN (never promise memory it lacks).
// Example (DUCC user guide): quantum 15 GB; 14 GB -> order 1, 28 GB -> order 2.

#include <cstdint>

namespace rmbus::core {

// The largest machine order accepted (65536 quanta: 64 TB at a 1 GB quantum): a bogus report cannot make
// the tables sized by the largest order explode. Job orders are clamped one above it (never placed).
constexpr std::uint64_t max_machine_order = 65536;

// Number of quanta one process of `memory_mb` needs. REQUIRES: quantum_mb > 0.
constexpr int order_for_request(std::uint64_t memory_mb, std::uint64_t quantum_mb) {
  return static_cast<int>((memory_mb + quantum_mb - 1) / quantum_mb);
}

// Number of quanta a machine offering `memory_mb` holds. REQUIRES: quantum_mb > 0.
constexpr int order_of_machine(std::uint64_t memory_mb, std::uint64_t quantum_mb) {
  return static_cast<int>(memory_mb / quantum_mb);
}

// The quanta a node's heartbeat gives it in its pool: its memory less the memory reserved on every node
// (ducc.rm.reserved.dram), rounded down, and bounded by max_machine_order so that a bogus report cannot make
// the tables sized by the largest order explode. The scheduler and the heartbeat intake (which reports
// quanta from a node's first heartbeat on) both use this one rule. REQUIRES: quantum_mb > 0.
constexpr int usable_machine_order(std::uint64_t memory_mb, std::uint64_t reserved_mb, std::uint64_t quantum_mb) {
  const std::uint64_t usable = memory_mb > reserved_mb ? memory_mb - reserved_mb : 0;
  const std::uint64_t order = usable / quantum_mb;
  return static_cast<int>(order < max_machine_order ? order : max_machine_order);
}

}  // namespace rmbus::core
