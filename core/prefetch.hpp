#pragma once
// The walks over every job record of a round (How Much, What Of, preemption, defragmentation, the plan
// keeper) read the first two cache lines of each 512-byte record. The processor's stride prefetcher does not
// carry a stride across a 4 KiB page, which holds eight records, so those walks ask for a record a few places
// ahead themselves; so do the walks over every machine record that read its state.
#include <cstddef>
#include <vector>

namespace rmbus::core {

inline constexpr std::size_t records_ahead = 8;

// Both are always inlined: GCC 12 judges a function whose only effect is a prefetch to have none, and drops
// the calls it did not inline (seen in the disassembly of the walks).

// Asks for the first two cache lines of a record.
[[gnu::always_inline]] inline void prefetch_record(const void* record) {
  const auto* p = static_cast<const char*>(record);
  __builtin_prefetch(p);
  __builtin_prefetch(p + 64);
}

// Asks for records[i + records_ahead], when there is such a record.
template <class Record>
[[gnu::always_inline]] inline void prefetch_ahead(const std::vector<Record>& records, std::size_t i) {
  if (i + records_ahead < records.size()) prefetch_record(&records[i + records_ahead]);
}

// The same for a walk over records in the order of a list: asks for the record that the entry records_ahead
// places after entry k names (slot_of gives an entry's index into records).
template <class Record, class List, class SlotOf>
[[gnu::always_inline]] inline void prefetch_listed(const std::vector<Record>& records, const List& list,
                                                   std::size_t k, SlotOf slot_of) {
  if (k + records_ahead < list.size())
    prefetch_record(&records[static_cast<std::size_t>(slot_of(list[k + records_ahead]))]);
}

}  // namespace rmbus::core
