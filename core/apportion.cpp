#include "core/apportion.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace rmbus::core {

std::int64_t apportion_entity::given_total() const {
  std::int64_t n = 0;
  for (auto g : given) n += g;
  return n;
}

std::int64_t apportion_entity::given_qshares() const {
  std::int64_t q = 0;
  for (std::size_t i = 0; i < given.size() && i < wanted.size(); ++i) q += given[i] * wanted[i].first;
  return q;
}

std::int64_t apportion_entity::given_at(int order) const {
  for (std::size_t i = 0; i < wanted.size() && i < given.size(); ++i)
    if (wanted[i].first == order) return given[i];
  return 0;
}

namespace {

struct slot_ref {
  std::size_t entity;
  std::size_t slot;
};

std::int64_t wanted_total(const apportion_entity& e) {
  std::int64_t n = 0;
  for (const auto& w : e.wanted) n += w.second;
  return n;
}

}  // namespace

void apportion_qshares(std::vector<apportion_entity>& es, free_blocks& v) {
  const std::size_t n = es.size();
  // Which entities want each order, largest order first; entity order inside a list is the sort order.
  std::map<int, std::vector<slot_ref>, std::greater<>> by_order;
  for (std::size_t e = 0; e < n; ++e) {
    es[e].given.assign(es[e].wanted.size(), 0);
    for (std::size_t s = 0; s < es[e].wanted.size(); ++s) {
      const int o = es[e].wanted[s].first;
      if (o > 0 && es[e].wanted[s].second > 0) {
        by_order[o].push_back({e, s});
        if (o > v.max_order()) v.grow(o);
      }
    }
  }

  std::vector<char> working(n, 0);
  for (std::size_t e = 0; e < n; ++e) working[e] = wanted_total(es[e]) > 0 && es[e].weight > 0;
  std::vector<std::int64_t> deserved(n, 0), pass_given(n, 0);
  std::vector<char> out_of_w(n, 0);

  // Pass loop. Every pass that gives anything removes at least one qshare from `v`, so it terminates.
  for (;;) {
    std::int64_t w_sum = 0;
    for (std::size_t e = 0; e < n; ++e)
      if (working[e]) w_sum += es[e].weight;
    const std::int64_t total = v.total_qshares();
    if (w_sum <= 0 || total <= 0) break;

    // Deserved qshares: floor of the weighted part, then one leftover qshare each in entity order.
    std::int64_t handed = 0;
    for (std::size_t e = 0; e < n; ++e) {
      deserved[e] = working[e] ? total * es[e].weight / w_sum : 0;
      handed += deserved[e];
      pass_given[e] = 0;
      out_of_w[e] = 0;
    }
    for (std::size_t e = 0; e < n && handed < total; ++e) {
      if (!working[e]) continue;
      ++deserved[e];
      ++handed;
    }

    bool gave = false;
    std::int64_t w_cur = w_sum;
    for (auto& [o, refs] : by_order) {
      const std::int64_t avail = v.nshares(o);
      if (avail <= 0) continue;
      std::int64_t taken = 0;
      for (const auto& r : refs) {
        if (taken >= avail) break;
        auto& ent = es[r.entity];
        auto& want = ent.wanted[r.slot].second;
        if (!working[r.entity] || want <= 0) continue;
        // share_of_order = nshares(o) * w / W * o qshares, rounded up (integer arithmetic: exact).
        const std::int64_t num = avail * ent.weight * o;
        const std::int64_t share_of_order = (num + w_cur - 1) / w_cur;
        const std::int64_t room = std::max<std::int64_t>(0, deserved[r.entity] - pass_given[r.entity]);
        const std::int64_t t = std::min(room, share_of_order);
        if (t <= 0) continue;
        std::int64_t k = t / o;
        if (k == 0 && t % o > 0) k = 1;  // round a small entitlement up to one whole process
        k = std::min({k, want, avail - taken});
        if (k <= 0) continue;
        ent.given[r.slot] += k;
        want -= k;
        pass_given[r.entity] += k * o;
        taken += k;
      }
      if (taken > 0) {
        v.take_shares(o, taken);
        gave = true;
      }
      // Satisfied entities stop diluting the others (once: DUCC subtracted again at every order).
      for (std::size_t e = 0; e < n; ++e) {
        if (working[e] && !out_of_w[e] && deserved[e] - pass_given[e] <= 0) {
          w_cur -= es[e].weight;
          out_of_w[e] = 1;
        }
      }
      if (w_cur <= 0) break;
    }

    // Drop entities that want nothing more, and spectators (nothing they want is available).
    for (std::size_t e = 0; e < n; ++e) {
      if (!working[e]) continue;
      bool can_use = false;
      for (const auto& w : es[e].wanted)
        if (w.second > 0 && v.nshares(w.first) > 0) can_use = true;
      if (!can_use) working[e] = 0;
    }
    if (!gave) break;
  }

  // Final bonus loop: rounding leftovers go to whoever can use a free block of exactly its order.
  bool gave = true;
  while (gave && v.total_qshares() > 0) {
    gave = false;
    for (std::size_t e = 0; e < n; ++e) {
      auto& ent = es[e];
      // Largest order first.
      std::vector<std::size_t> slots(ent.wanted.size());
      for (std::size_t s = 0; s < slots.size(); ++s) slots[s] = s;
      std::sort(slots.begin(), slots.end(),
                [&](std::size_t a, std::size_t b) { return ent.wanted[a].first > ent.wanted[b].first; });
      for (auto s : slots) {
        const int o = ent.wanted[s].first;
        if (ent.wanted[s].second > 0 && v.blocks(o) > 0) {
          ent.given[s] += 1;
          ent.wanted[s].second -= 1;
          v.take_shares(o, 1);
          gave = true;
        }
      }
    }
  }
}

}  // namespace rmbus::core
