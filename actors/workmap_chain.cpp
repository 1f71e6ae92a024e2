#include "actors/workmap_chain.hpp"

namespace rmbus::actors {

workmap_chain::verdict workmap_chain::apply(const std::string& src, std::uint64_t seq, const messages::workmap_delta& d,
                                            item_map& items) {
  if (broken_) {
    // Reported once, when the chain broke; a delta before any full map (or after a reconfiguration) is the
    // start of such a wait too, and says so.
    if (seq_ != 0 || !src_.empty()) return {outcome::waiting, {}};
    seq_ = seq;  // reported now; later ones wait quietly
    src_ = src;
    return {outcome::gap, "no full map taken yet (base " + std::to_string(d.base_seq) + ")"};
  }
  if (src != src_ || d.base_seq != seq_) {
    broken_ = true;
    if (src != src_) return {outcome::gap, "base " + std::to_string(d.base_seq) + " is a map of " + src + ", the last map taken is " + src_ + "'s"};
    return {outcome::gap, "base " + std::to_string(d.base_seq) + " is not the last map applied (" + std::to_string(seq_) + ")"};
  }
  // Check everything first: a delta is applied whole or not at all.
  auto refuse = [&](std::string why) {
    broken_ = true;
    return verdict{outcome::refused, std::move(why)};
  };
  for (std::size_t i = 0; i < d.added.size(); ++i)
    if (items.count(d.added[i].id)) return refuse("added[" + std::to_string(i) + "]: id '" + d.added[i].id + "' is in the map already");
  for (std::size_t i = 0; i < d.changed.size(); ++i)
    if (!items.count(d.changed[i].id)) return refuse("changed[" + std::to_string(i) + "]: unknown id '" + d.changed[i].id + "'");
  for (std::size_t i = 0; i < d.removed.size(); ++i)
    if (!items.count(d.removed[i])) return refuse("removed[" + std::to_string(i) + "]: unknown id '" + d.removed[i] + "'");
  if (items.size() - d.removed.size() + d.added.size() > max_items_)
    return refuse("the map would hold " + std::to_string(items.size() - d.removed.size() + d.added.size()) +
                  " items, more than max_array_len " + std::to_string(max_items_));
  for (const auto& id : d.removed) items.erase(id);
  for (const auto& w : d.changed) items.find(w.id)->second = w;
  for (const auto& w : d.added) items.emplace(w.id, w);
  seq_ = seq;
  return {outcome::applied, {}};
}

const char* to_string(workmap_chain::outcome o) {
  switch (o) {
    case workmap_chain::outcome::applied: return "applied";
    case workmap_chain::outcome::gap: return "gap";
    case workmap_chain::outcome::waiting: return "waiting";
    case workmap_chain::outcome::refused: return "refused";
  }
  return "?";
}

}  // namespace rmbus::actors
