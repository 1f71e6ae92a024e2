#include "core/apportion.hpp"

#include <algorithm>

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

// The entities wanting one order: refs[begin, end) of the call's ref list.
struct order_span {
  int order;
  std::size_t begin;
  std::size_t end;
  std::int64_t max_weight;  // of the entities in the span when it was built
};

// An entity's demand in quanta and its weight, for the water-fill's order of demand per weight.
struct need {
  std::int64_t demand_q;
  std::int64_t weight;
  std::size_t entity;
};

std::int64_t wanted_total(const apportion_entity& e) {
  std::int64_t n = 0;
  for (const auto& w : e.wanted) n += w.second;
  return n;
}

}  // namespace

// How the passes are kept cheap without changing a result (the class, user and job levels call this some
// 500 times a round at 10,000 nodes; a job-level call at a 1 GB quantum runs some 20 passes over 50 orders):
//  * the refs of each order are compacted at the start of a pass, dropping entities that stopped working
//    and slots that want nothing more; both are for good, and such refs take no part and retire nobody;
//  * after the first order that had nshares in a pass, an order none of whose entities has room left is
//    skipped without asking the table for its nshares: it could give nothing and retire nobody;
//  * sorts whose comparator is a total order (ties broken by entity) are skipped when the sequence is
//    already in order, which is always so for the leftover quanta of equally weighted entities (equal
//    remainders), and compare plain integers when every weight is equal.
void apportion_qshares(std::vector<apportion_entity>& es, free_blocks& v) {
  const std::size_t n = es.size();
  // Which entities want each order, largest order first; entity order inside a span.
  std::vector<slot_ref> refs;
  std::vector<int> ref_order;
  for (std::size_t e = 0; e < n; ++e) {
    es[e].given.assign(es[e].wanted.size(), 0);
    for (std::size_t s = 0; s < es[e].wanted.size(); ++s) {
      const int o = es[e].wanted[s].first;
      if (o > 0 && es[e].wanted[s].second > 0) {
        refs.push_back({e, s});
        ref_order.push_back(o);
        if (o > v.max_order()) v.grow(o);
      }
    }
  }
  std::vector<order_span> spans;
  {
    std::vector<std::size_t> idx(refs.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      if (ref_order[a] != ref_order[b]) return ref_order[a] > ref_order[b];
      return a < b;  // pushed in entity order
    });
    std::vector<slot_ref> sorted(refs.size());
    for (std::size_t i = 0; i < idx.size(); ++i) {
      sorted[i] = refs[idx[i]];
      const int o = ref_order[idx[i]];
      if (spans.empty() || spans.back().order != o) spans.push_back({o, i, i, 0});
      spans.back().end = i + 1;
      spans.back().max_weight = std::max(spans.back().max_weight, es[sorted[i].entity].weight);
    }
    refs = std::move(sorted);
  }

  std::vector<char> working(n, 0);
  std::vector<std::size_t> alive;  // the working entities, in entity order
  bool equal_weights = true;
  for (std::size_t e = 0; e < n; ++e) {
    working[e] = wanted_total(es[e]) > 0 && es[e].weight > 0;
    if (working[e]) alive.push_back(e);
    equal_weights = equal_weights && es[e].weight == es[0].weight;
  }
  std::vector<std::int64_t> deserved(n, 0), pass_given(n, 0);
  std::vector<char> out_of_w(n, 0);
  // Scratch reused by every pass and order (allocated once per call).
  std::vector<char> capped(n, 0);
  std::vector<need> by_need;  // working entities; their order is the last pass's
  for (std::size_t e : alive) by_need.push_back({0, es[e].weight, e});
  std::vector<std::size_t> by_rem, order_by_rem;
  std::vector<std::int64_t> rem_of(n, 0);
  struct part {
    const slot_ref* ref;
    std::int64_t whole;
    std::int64_t rem_num;
    std::int64_t den;
  };
  std::vector<part> parts;
  const auto less_need = [&](const need& a, const need& b) {
    if (equal_weights) {
      if (a.demand_q != b.demand_q) return a.demand_q < b.demand_q;
      return a.entity < b.entity;
    }
    const auto x = static_cast<__int128>(a.demand_q) * b.weight;
    const auto y = static_cast<__int128>(b.demand_q) * a.weight;
    if (x != y) return x < y;
    return a.entity < b.entity;
  };

  // Pass loop. Every pass that gives anything removes at least one qshare from `v`, so it terminates.
  for (;;) {
    std::int64_t w_sum = 0;
    for (std::size_t e : alive) w_sum += es[e].weight;
    const std::int64_t total = v.total_qshares();
    if (w_sum <= 0 || total <= 0) break;
    for (auto& sp : spans) {
      const auto live_end = std::remove_if(refs.begin() + static_cast<std::ptrdiff_t>(sp.begin),
                                           refs.begin() + static_cast<std::ptrdiff_t>(sp.end), [&](const slot_ref& r) {
                                             return !working[r.entity] || es[r.entity].wanted[r.slot].second <= 0;
                                           });
      sp.end = static_cast<std::size_t>(live_end - refs.begin());
    }

    // Deserved qshares: the weighted part of the total, water-filled so that an entity wanting less
    // than its part (in quanta) is deserved exactly its demand and the rest is shared by the others in
    // the same pass (DUCC: floor(total * w / W) and later passes, which drift); then the floors, and the
    // leftover qshares one each by largest remainder (ties: entity order; DUCC: entity order).
    for (std::size_t e : alive) capped[e] = 0;
    std::int64_t rest = total, w_rest = w_sum;
    {
      // One sweep in order of demand per weight: once an entity's demand exceeds the current level, so
      // do all after it (removing a capped entity only raises the level). The last pass's order is the
      // starting point: demands shrink a little from pass to pass, so it is often still in order.
      std::size_t kept = 0;
      for (auto& nd : by_need) {
        if (!working[nd.entity]) continue;
        nd.demand_q = 0;
        for (const auto& w : es[nd.entity].wanted) nd.demand_q += w.second * w.first;
        by_need[kept++] = nd;
      }
      by_need.resize(kept);
      if (!std::is_sorted(by_need.begin(), by_need.end(), less_need))
        std::sort(by_need.begin(), by_need.end(), less_need);
      for (const auto& nd : by_need) {
        if (w_rest <= 0) break;
        // demand_q <= rest * w / w_rest ?
        if (static_cast<__int128>(nd.demand_q) * w_rest > static_cast<__int128>(rest) * nd.weight) break;
        capped[nd.entity] = 1;
        deserved[nd.entity] = nd.demand_q;
        rest -= nd.demand_q;
        w_rest -= nd.weight;
      }
    }
    // (Entities that stopped working are read nowhere below: their deserved and counters go stale.)
    std::int64_t handed = 0;
    by_rem.clear();
    for (std::size_t e : alive) {
      if (!capped[e]) {
        deserved[e] = w_rest > 0 ? rest * es[e].weight / w_rest : 0;
        by_rem.push_back(e);
      }
      handed += deserved[e];
      pass_given[e] = 0;
      out_of_w[e] = 0;
    }
    for (std::size_t e : by_rem) rem_of[e] = (rest * es[e].weight) % w_rest;
    const auto larger_rem = [&](std::size_t a, std::size_t b) {
      if (rem_of[a] != rem_of[b]) return rem_of[a] > rem_of[b];
      return a < b;  // ties in entity order
    };
    if (!std::is_sorted(by_rem.begin(), by_rem.end(), larger_rem)) std::sort(by_rem.begin(), by_rem.end(), larger_rem);
    for (std::size_t e : by_rem) {
      if (handed >= total) break;
      ++deserved[e];
      ++handed;
    }

    bool gave = false;
    bool first_order_done = false;
    std::int64_t w_cur = w_sum;
    for (const auto& sp : spans) {
      const int o = sp.order;
      const auto has_room = [&](const slot_ref& r) { return deserved[r.entity] - pass_given[r.entity] > 0; };
      if (first_order_done && std::none_of(refs.begin() + static_cast<std::ptrdiff_t>(sp.begin),
                                           refs.begin() + static_cast<std::ptrdiff_t>(sp.end), has_room))
        continue;
      const std::int64_t avail = v.nshares(o);
      if (avail <= 0) continue;
      // When every weighted part avail * w / W is under half a process, so is every room / o that is
      // smaller, and nothing is given at this order (most visits of a long pass loop).
      const bool gives_nothing = 2 * static_cast<__int128>(avail) * sp.max_weight < w_cur;
      // Each entity's entitlement in processes at this order is the smaller of its weighted part of the
      // nshares available, avail * w / W, and what is left of its deserved quanta, room / o; as an exact
      // fraction num / den. Whole processes first, then the processes left over go one each by largest
      // remainder (ties: entity order). This is DUCC's "floor, and one whole process for a small
      // entitlement" generalised so that rounding never drifts by more than one process.
      parts.clear();
      std::int64_t taken = 0;
      for (std::size_t k = sp.begin; k < sp.end && !gives_nothing; ++k) {
        const auto& r = refs[k];
        auto& ent = es[r.entity];
        const std::int64_t want = ent.wanted[r.slot].second;
        if (!working[r.entity] || want <= 0) continue;
        const std::int64_t room = std::max<std::int64_t>(0, deserved[r.entity] - pass_given[r.entity]);
        if (room <= 0) continue;
        // avail * w / w_cur  vs  room / o  (compare avail * w * o with room * w_cur)
        std::int64_t num, den;
        if (static_cast<__int128>(avail) * ent.weight * o <= static_cast<__int128>(room) * w_cur) {
          num = avail * ent.weight;
          den = w_cur;
        } else {
          num = room;
          den = o;
        }
        std::int64_t whole = num / den;
        std::int64_t rem = num % den;
        if (whole >= want) {
          whole = want;
          rem = 0;
        }
        parts.push_back({&r, whole, rem, den});
        taken += whole;
      }
      if (taken > avail) {  // cannot happen (sum of weighted parts <= avail); stay safe
        for (auto it = parts.rbegin(); it != parts.rend() && taken > avail; ++it) {
          const std::int64_t cut = std::min(it->whole, taken - avail);
          it->whole -= cut;
          taken -= cut;
        }
      }
      // Each entitlement is rounded half up, largest remainders first while nshares last: an entitlement
      // of half a process or more still gets a whole one (DUCC's round-up of small entitlements,
      // UIMA-3664), a sliver of one does not (DUCC gave a whole process for any sliver, which pushes
      // counts more than one process away from the weighted max-min share).
      if (taken < avail) {
        order_by_rem.clear();
        for (std::size_t i = 0; i < parts.size(); ++i)
          if (parts[i].rem_num > 0 && 2 * parts[i].rem_num >= parts[i].den) order_by_rem.push_back(i);
        std::sort(order_by_rem.begin(), order_by_rem.end(), [&](std::size_t a, std::size_t b) {
          const auto x = static_cast<__int128>(parts[a].rem_num) * parts[b].den;
          const auto y = static_cast<__int128>(parts[b].rem_num) * parts[a].den;
          if (x != y) return x > y;
          return a < b;  // ties in entity order
        });
        for (std::size_t i : order_by_rem) {
          if (taken >= avail) break;
          ++parts[i].whole;
          ++taken;
        }
      }
      for (const auto& pt : parts) {
        if (pt.whole <= 0) continue;
        auto& ent = es[pt.ref->entity];
        ent.given[pt.ref->slot] += pt.whole;
        ent.wanted[pt.ref->slot].second -= pt.whole;
        pass_given[pt.ref->entity] += pt.whole * o;
      }
      if (taken > 0) {
        v.take_shares(o, taken);
        gave = true;
      }
      // Satisfied entities stop diluting the others (once: DUCC subtracted again at every order). After
      // the first order only the entities served at this order can have changed, and only if it gave.
      auto retire = [&](std::size_t e) {
        if (working[e] && !out_of_w[e] && deserved[e] - pass_given[e] <= 0) {
          w_cur -= es[e].weight;
          out_of_w[e] = 1;
        }
      };
      if (!first_order_done) {
        for (std::size_t e : alive) retire(e);
        first_order_done = true;
      } else if (taken > 0) {
        for (std::size_t k = sp.begin; k < sp.end; ++k) retire(refs[k].entity);
      }
      if (w_cur <= 0) break;
    }

    // Drop entities that want nothing more, and spectators (nothing they want is available).
    std::size_t still = 0;
    for (std::size_t e : alive) {
      bool can_use = false;
      for (const auto& w : es[e].wanted)
        if (w.second > 0 && v.nshares(w.first) > 0) can_use = true;
      if (can_use) alive[still++] = e;
      else working[e] = 0;
    }
    alive.resize(still);
    if (!gave) break;
  }

  // Final bonus loop: rounding leftovers go to whoever can use a free block of exactly its order.
  // Each entity's slots largest order first, sorted once (the orders never change, so every iteration
  // would sort them the same way).
  // Entity e's slots are slots[first_slot[e] .. first_slot[e + 1]).
  std::vector<std::size_t> first_slot(n + 1, 0), slots;
  for (std::size_t e = 0; e < n; ++e) {
    first_slot[e] = slots.size();
    for (std::size_t s = 0; s < es[e].wanted.size(); ++s) slots.push_back(s);
    std::sort(slots.begin() + static_cast<std::ptrdiff_t>(first_slot[e]), slots.end(),
              [&](std::size_t a, std::size_t b) { return es[e].wanted[a].first > es[e].wanted[b].first; });
  }
  first_slot[n] = slots.size();
  bool gave = true;
  while (gave && v.total_qshares() > 0) {
    gave = false;
    for (std::size_t e = 0; e < n; ++e) {
      auto& ent = es[e];
      for (std::size_t k = first_slot[e]; k < first_slot[e + 1]; ++k) {
        const std::size_t s = slots[k];
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
