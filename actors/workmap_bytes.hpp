#pragma once
// The last work map's items by their encoded bytes, so that a full map decodes only the items that changed.
//
// An orchestrator republishes its whole map, and between two maps most items are the same bytes. An item
// whose bytes equal those of the item of the same id in the last map taken is that item again; only the
// others are decoded (messages::decode_workmap_item), and the map becomes the change it makes to the last:
// the ids added, changed and removed, as a delta would name them. Decoding a map of 100,000 items whole and
// comparing it with the last one item by item took most of a round's time at 50,000 nodes.
//
// The comparison holds only when the last map decoded whole, every item well-formed (its bytes then stand for
// the item held). Whatever this cannot take is decoded whole as before: the map's bytes not an array of maps
// with a string `id`, an item that does not decode, more items than max_array_len, a body above
// max_body_bytes. A full decode gives the exact error, and keeps a damaged item's last good state.
//
// Without CAF, so that it can be tested alone. Not thread-safe; one owner (the differencing actor).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "messages/envelope.hpp"
#include "messages/workmap.hpp"

namespace rmbus::actors {

class workmap_bytes {
 public:
  using item_map = std::map<std::string, messages::work_item>;
  // A map's encoded `work` and what holds its bytes: the map's whole body as it came off the bus, kept as it
  // is rather than copied out (16 MB at 50,000 nodes).
  struct map_bytes {
    std::shared_ptr<const std::string> owner;
    std::string_view work;  // within *owner
    map_bytes(std::shared_ptr<const std::string> body, std::string_view work_in_body)
        : owner(std::move(body)), work(work_in_body) {}
    // The `work` alone, copied.
    map_bytes(std::string work_alone)  // NOLINT(google-explicit-constructor): tests' maps are their work
        : owner(std::make_shared<const std::string>(std::move(work_alone))), work(*owner) {}
  };
  // An item of a map's `work`: its id and bytes, views into the kept bytes.
  struct entry {
    std::string_view id;
    std::string_view bytes;
  };

  // A map compared with the last, not yet taken: its change, and its bytes to keep once taken (adopt).
  struct compared {
    std::vector<messages::work_item> added;    // ids the last map did not hold
    std::vector<messages::work_item> changed;  // ids it held, now different
    std::vector<std::string> removed;          // ids it held, now gone
    std::size_t decoded = 0;                   // items decoded: those whose bytes differ
    std::size_t items = 0;                     // items in the map
   private:
    friend class workmap_bytes;
    std::shared_ptr<const std::string> owner;
    std::string_view work;
    std::vector<entry> entries;
  };

  // Keeps `map` (the encoded `work` of a map that decoded whole, no damaged item) as the last map's bytes.
  // Forgets them instead when they cannot be split into items, or name an id twice.
  void remember(map_bytes map);
  void forget();
  bool holds() const { return owner_ != nullptr; }
  // The last map's `work` bytes (empty when nothing is held).
  std::string_view bytes() const { return work_; }

  // `map`, the encoded `work` of a map whose head decoded (messages::decode_workmap_head), against the last
  // map's bytes and `last`, the items that map holds: the change, or nullopt when the map must be decoded
  // whole (see above; always when nothing is held). Not const: it may index the last map's ids.
  std::optional<compared> compare(std::string_view topic, map_bytes map, const item_map& last,
                                  const messages::decode_limits& limits);
  // The compared map was taken: its bytes are the last map's now.
  void adopt(compared&& c);
  // Applies the change to `items` (the last map's, which it was compared with).
  static void apply(const compared& c, item_map& items);

 private:
  // The position of `id` among the last map's items, through an index built on first need: a map whose
  // items keep their order and ids never needs one.
  std::optional<std::size_t> position_of(std::string_view id);

  std::shared_ptr<const std::string> owner_;
  std::string_view work_;       // within *owner_
  std::vector<entry> entries_;  // the last map's items, in wire order
  std::optional<std::unordered_map<std::string_view, std::size_t>> index_;
};

}  // namespace rmbus::actors
