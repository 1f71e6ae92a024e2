#include "actors/workmap_bytes.hpp"

#include <unordered_set>

namespace rmbus::actors {

namespace {

// The items of `work` in wire order, or nullopt when it is not an array of items with ids (see peek_workmap_item).
std::optional<std::vector<workmap_bytes::entry>> split_items(std::string_view work) {
  const auto array = messages::peek_workmap_array(work);
  if (!array) return std::nullopt;
  std::vector<workmap_bytes::entry> out;
  out.reserve(array->items);
  auto rest = array->bytes;
  for (std::uint64_t i = 0; i < array->items; ++i) {
    const auto item = messages::peek_workmap_item(rest);
    if (!item) return std::nullopt;
    out.push_back({item->id, item->bytes});
    rest.remove_prefix(item->bytes.size());
  }
  if (!rest.empty()) return std::nullopt;
  return out;
}

}  // namespace

void workmap_bytes::remember(map_bytes map) {
  forget();
  auto entries = split_items(map.work);
  if (!entries) return;
  std::unordered_set<std::string_view> ids;
  ids.reserve(entries->size());
  for (const auto& e : *entries)
    // An id twice in one map: a full decode settles which occurrence counts (and whether one is damaged).
    if (!ids.insert(e.id).second) return;
  owner_ = std::move(map.owner);
  work_ = map.work;
  entries_ = std::move(*entries);
}

void workmap_bytes::forget() {
  owner_.reset();
  work_ = {};
  entries_.clear();
  index_.reset();
}

std::optional<std::size_t> workmap_bytes::position_of(std::string_view id) {
  if (!index_) {
    index_.emplace();
    index_->reserve(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) index_->emplace(entries_[i].id, i);
  }
  auto it = index_->find(id);
  if (it == index_->end()) return std::nullopt;
  return it->second;
}

std::optional<workmap_bytes::compared> workmap_bytes::compare(std::string_view topic, map_bytes map,
                                                              const item_map& last,
                                                              const messages::decode_limits& limits) {
  if (!owner_) return std::nullopt;
  compared c;
  c.owner = std::move(map.owner);
  c.work = map.work;
  const auto array = messages::peek_workmap_array(c.work);
  if (!array || array->items > limits.max_array_len) return std::nullopt;
  c.items = array->items;
  c.entries.reserve(array->items);
  // Walks the new items beside the last map's, expecting each at the position after the one the previous
  // item matched: an item whose bytes start the rest is that item again (MessagePack values are prefix-free,
  // so equal leading bytes are the whole item), found without reading it. Only the others are read, and only
  // those whose bytes differ from the last map's item of their id are decoded.
  std::vector<char> matched(entries_.size(), 0);
  std::unordered_set<std::string_view> added_ids;
  std::size_t expected = 0;
  auto rest = array->bytes;
  for (std::uint64_t i = 0; i < array->items; ++i) {
    if (expected < entries_.size() && rest.starts_with(entries_[expected].bytes)) {
      const auto& before = entries_[expected];
      if (matched[expected]) return std::nullopt;  // an id twice: decoded whole
      matched[expected] = 1;
      const auto id_offset = static_cast<std::size_t>(before.id.data() - before.bytes.data());
      c.entries.push_back({rest.substr(id_offset, before.id.size()), rest.substr(0, before.bytes.size())});
      rest.remove_prefix(before.bytes.size());
      ++expected;
      continue;
    }
    const auto item = messages::peek_workmap_item(rest);
    if (!item) return std::nullopt;
    c.entries.push_back({item->id, item->bytes});
    rest.remove_prefix(item->bytes.size());
    std::optional<std::size_t> at;
    if (expected < entries_.size() && entries_[expected].id == item->id) at = expected;
    else at = position_of(item->id);
    if (at) {
      if (matched[*at]) return std::nullopt;  // an id twice: decoded whole
      matched[*at] = 1;
      expected = *at + 1;
      if (entries_[*at].bytes == item->bytes) continue;  // moved, not changed (one arrived or left before it)
    }
    ++c.decoded;
    auto decoded = messages::decode_workmap_item(topic, item->bytes, limits);
    if (!decoded || decoded.value().id != item->id) return std::nullopt;
    if (!at) {
      if (!added_ids.insert(item->id).second) return std::nullopt;
      c.added.push_back(std::move(decoded.value()));
      continue;
    }
    auto held = last.find(decoded.value().id);
    if (held == last.end()) return std::nullopt;  // the last map's bytes and items disagree: trust neither
    if (held->second != decoded.value()) c.changed.push_back(std::move(decoded.value()));
  }
  if (!rest.empty()) return std::nullopt;
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (!matched[i]) c.removed.emplace_back(entries_[i].id);
  return c;
}

void workmap_bytes::adopt(compared&& c) {
  owner_ = std::move(c.owner);
  work_ = c.work;
  entries_ = std::move(c.entries);
  index_.reset();
}

void workmap_bytes::apply(const compared& c, item_map& items) {
  for (const auto& id : c.removed) items.erase(id);
  for (const auto& w : c.changed) items.insert_or_assign(w.id, w);
  for (const auto& w : c.added) items.insert_or_assign(w.id, w);
}

}  // namespace rmbus::actors
