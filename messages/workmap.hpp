#pragma once
// orchestrator.workmap — sent by the orchestrator to the RM, repeatedly: the FULL work map every time.
//
// The RM never learns work by increments on the wire; it differences each full map against the previous one.
// So a malformed item must not look like a finished one (that would free shares whose processes still run):
// decode_workmap keeps every well-formed item and reports each malformed one in `bad_items`, with its id when
// the id could be read. The consumer keeps a bad item's last good state (or ignores it while it is new) and
// raises a bad_message event. Only top-level damage (not MessagePack, not a map, no `work` array, a bad
// envelope) rejects the whole map.
//
// Sizes are MB per process; times are milliseconds. This is the hot, big message: its codec is hand-written
// (one pass per map, no intermediate objects) while keeping the map-with-string-keys wire format.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/result.hpp"

namespace rmbus::messages {

enum class work_kind { job, service, ap, reservation };                     // wire: "job" | "service" | ...
enum class work_state { waiting, running, completing, completed };         // "running": a process initialized
enum class process_state { starting, initializing, running, ended };

std::string_view to_string(work_kind k);
std::string_view to_string(work_state s);
std::string_view to_string(process_state s);
std::optional<work_kind> parse_work_kind(std::string_view s);
std::optional<work_state> parse_work_state(std::string_view s);
std::optional<process_state> parse_process_state(std::string_view s);

// One process of a work item, on the node where the RM placed its share.
struct work_process {
  std::string id;    // the share id the RM gave
  std::string node;  // node it runs on
  process_state state = process_state::starting;
  std::uint64_t init_ms = 0;  // time spent initializing
  std::uint64_t run_ms = 0;   // time invested in the work items in flight (the investment)
  std::optional<std::uint64_t> node_memory_mb;  // lets a restarted RM size a node it has not heard from yet

  friend bool operator==(const work_process&, const work_process&) = default;
};

struct work_item {
  std::string id;
  work_kind kind = work_kind::job;
  std::string user;
  std::string class_name;           // wire key "class"; empty = the default class for its kind
  std::uint64_t memory_mb = 0;      // per process
  std::uint64_t submitted_ms = 0;   // submission time: the "oldest first" order
  work_state state = work_state::waiting;
  std::uint64_t max_processes = 0;  // 0 = no limit
  std::uint64_t threads = 0;        // threads per process
  std::uint64_t items_total = 0;    // work items (not work-map items)
  std::uint64_t items_done = 0;
  std::uint64_t item_ms = 0;        // mean ms per work item, 0 = unknown
  std::vector<work_process> processes;
  std::optional<std::uint64_t> service_id;  // spreads instances of one service over machines
  std::vector<std::string> hosts;           // the user's machine list; empty = absent on the wire

  friend bool operator==(const work_item&, const work_item&) = default;
};

// A malformed entry of `work`: its position, its id when it could be read (empty otherwise), and why.
struct workmap_item_error {
  std::size_t index = 0;
  std::string id;
  decode_error error;  // field is the full path, e.g. "work[3].processes[0].state"

  friend bool operator==(const workmap_item_error&, const workmap_item_error&) = default;
};

// More malformed items than this and the map is rejected whole: it is junk, not one damaged item.
inline constexpr std::size_t workmap_max_bad_items = 1000;

struct workmap {
  std::vector<work_item> work;  // the well-formed items, in wire order
  // Optional on the wire (HA fencing, docs/protocol.md 4.8): the highest RM epoch the orchestrator has
  // accepted an rm.state of. Absent from an orchestrator that never saw an epoch (HA off).
  std::optional<std::uint64_t> rm_epoch;
  // Optional on the wire, with rm_epoch: the `cycle` of the last rm.state the orchestrator acted on. A standby
  // that cannot hear the active's beacons sees it advance while that active is alive (docs/protocol.md 4.8).
  std::optional<std::uint64_t> rm_cycle;
  // Filled by decode_workmap only; encode ignores it. Non-empty means the orchestrator sent damaged items:
  // do not retire work that is missing from `work` when one of these has no readable id.
  std::vector<workmap_item_error> bad_items;

  friend bool operator==(const workmap&, const workmap&) = default;
};

std::string encode(const envelope& env, const workmap& msg);
result<workmap> decode_workmap(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                               envelope* env_out = nullptr);

// The encoded `work` array of a work map body without decoding it, when `work` is the map's last key (as
// encode writes it): the bytes from its value to the body's end, after a walk over the envelope's keys only.
// Nothing in the view is checked: a view equal to that of a body decode_workmap accepted is that same array
// with nothing after it, so the body decodes to the same items (its envelope aside). nullopt when `work` is
// missing or not last, or a key before it is not a string. A view into body.
std::optional<std::string_view> peek_workmap_work(std::string_view body);

// A work map taken item by item (actors/workmap_bytes.hpp): an item whose bytes equal those of an item of a
// map decoded before is that item again, so only the others are decoded.
//
// The encoded `work` array (peek_workmap_work's view): its item count and the items' bytes after its header;
// nullopt when it does not start with an array header (or announces more items than bytes follow).
struct encoded_work_array {
  std::uint64_t items = 0;
  std::string_view bytes;
};
std::optional<encoded_work_array> peek_workmap_array(std::string_view work);
// The item at the front of `bytes` (the array's bytes, or what follows an item): its id and its own bytes;
// nullopt unless it is a map with string keys and a string `id`. Nothing else is checked: decode_workmap_item
// checks an item, decode_workmap_head the rest of the body.
struct encoded_work_item {
  std::string_view id;     // its first `id` entry
  std::string_view bytes;  // the whole item
};
std::optional<encoded_work_item> peek_workmap_item(std::string_view bytes);
// A work map body decoded but for its items: the envelope and every other top-level key read and checked as
// decode_workmap does, `work` given back empty. `work` must be the body's tail that peek_workmap_work gave.
result<workmap> decode_workmap_head(std::string_view topic, std::string_view body, std::string_view work,
                                    const decode_limits& limits = {}, envelope* env_out = nullptr);
// One item of a work map's `work` array (bytes from peek_workmap_item), read and checked as decode_workmap
// reads it there: the same rules, and the depth limit counted from the map's root.
result<work_item> decode_workmap_item(std::string_view topic, std::string_view bytes, const decode_limits& limits = {});

// One work item (as a standalone MessagePack map, no envelope), as the admin `whatif` command carries it.
std::string encode_work_item(const work_item& item);
result<work_item> decode_work_item(std::string_view topic, std::string_view body, const decode_limits& limits = {});

}  // namespace rmbus::messages
