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

// The slots wanting one order: refs[begin, end) of the call's ref list, in entity order.
struct order_span {
  int order;
  std::size_t begin;
  std::size_t end;
  std::int64_t max_weight;  // of the entities in the span when it was built
};

// One call's state, flat: entities and their (order, wanted) slots in parallel arrays, so that the sweeps
// of the pass loop read contiguous memory instead of each entity's vectors. The results are written back
// into the entities at the end.
//
// How the passes are kept cheap without changing a result (the class, user and job levels call this some
// 500 times a round at 10,000 nodes; a job-level call at a 1 GB quantum runs some 20 passes over 50 orders):
//  * the refs of each order are compacted at the start of a pass, dropping entities that stopped working
//    and slots that want nothing more; both are for good, and such refs take no part and retire nobody;
//  * after the first order that had nshares in a pass, an order none of whose entities has room left is
//    skipped without asking the table for its nshares, and an order whose every weighted part is under
//    half a process gives nothing: neither can give anything or retire anybody;
//  * the sweeps over entities visit the working ones only; each entity's demand is kept up to date as it
//    is served instead of summed again every pass;
//  * sorts whose comparator is a total order (ties broken by entity) are skipped when the sequence is
//    already in order, which is always so for the leftover quanta of equally weighted entities (equal
//    remainders), and compare plain integers when every weight is equal.
class apportioner {
 public:
  void run(apportion_entity* es, std::size_t n, free_blocks& v) {
    es_ = es;
    v_ = &v;
    n_ = n;
    build();
    while (pass()) {
    }
    bonus();
    write_back();
  }

 private:
  // Every array is cleared or assigned here: a workspace's last call leaves nothing that counts.
  void build() {
    equal_weights_ = true;
    alive_.clear();
    w_alive_ = 0;
    slot_entity_.clear();
    slot_order_.clear();
    slot_want_.clear();
    refs_.clear();
    spans_.clear();
    first_.assign(n_ + 1, 0);
    weight_.assign(n_, 0);
    demand_q_.assign(n_, 0);
    got_q_.assign(n_, 0);
    target_.assign(n_, 0);
    working_.assign(n_, 0);
    for (std::size_t e = 0; e < n_; ++e) {
      first_[e] = slot_entity_.size();
      weight_[e] = es_[e].weight;
      std::int64_t wanted = 0;
      for (const auto& [order, count] : es_[e].wanted) {
        slot_entity_.push_back(e);
        slot_order_.push_back(order);
        slot_want_.push_back(count);
        wanted += count;
        demand_q_[e] += count * order;
      }
      working_[e] = wanted > 0 && weight_[e] > 0;
      if (working_[e]) {
        alive_.push_back(e);
        w_alive_ += weight_[e];
      }
      equal_weights_ = equal_weights_ && weight_[e] == weight_[0];
    }
    first_[n_] = slot_entity_.size();
    slot_given_.assign(slot_entity_.size(), 0);
    deserved_.assign(n_, 0);
    pass_given_.assign(n_, 0);
    rem_.assign(n_, 0);
    capped_at_.assign(n_, 0);
    pass_no_ = 0;
    out_of_w_.assign(n_, 0);
    by_need_ = alive_;

    // Which slots want each order, largest order first; entity order inside a span (slots are numbered in
    // entity order, and an entity has at most one slot per order).
    // A counting sort, stable, so slot order (entity order) holds within an order; a comparison sort of the
    // user level's thousands of slots was most of this function's cost.
    int top = 0;
    for (std::size_t s = 0; s < slot_entity_.size(); ++s) {
      if (slot_order_[s] <= 0 || slot_want_[s] <= 0) continue;
      top = std::max(top, slot_order_[s]);
      if (slot_order_[s] > v_->max_order()) v_->grow(slot_order_[s]);
    }
    order_start_.assign(static_cast<std::size_t>(top) + 2, 0);
    std::size_t wanting = 0;
    for (std::size_t s = 0; s < slot_entity_.size(); ++s) {
      if (slot_order_[s] <= 0 || slot_want_[s] <= 0) continue;
      ++order_start_[static_cast<std::size_t>(top - slot_order_[s]) + 1];  // largest order first
      ++wanting;
    }
    for (std::size_t k = 1; k < order_start_.size(); ++k) order_start_[k] += order_start_[k - 1];
    refs_.resize(wanting);
    for (std::size_t s = 0; s < slot_entity_.size(); ++s) {
      if (slot_order_[s] <= 0 || slot_want_[s] <= 0) continue;
      refs_[order_start_[static_cast<std::size_t>(top - slot_order_[s])]++] = s;
    }
    slot_span_.assign(slot_entity_.size(), 0);
    for (std::size_t k = 0; k < refs_.size(); ++k) {
      const int o = slot_order_[refs_[k]];
      if (spans_.empty() || spans_.back().order != o) spans_.push_back({o, k, k, 0});
      spans_.back().end = k + 1;
      spans_.back().max_weight = std::max(spans_.back().max_weight, weight_[slot_entity_[refs_[k]]]);
      slot_span_[refs_[k]] = spans_.size() - 1;
    }
    span_usable_.assign(spans_.size(), 0);
  }

  // One pass; returns whether it gave anything (the pass loop stops when a pass gives nothing).
  bool pass() {
    const std::int64_t w_sum = w_alive_;
    const std::int64_t total = v_->total_qshares();
    if (w_sum <= 0 || total <= 0) return false;
    for (auto& sp : spans_) {
      const auto first = refs_.begin() + static_cast<std::ptrdiff_t>(sp.begin);
      const auto live_end = std::remove_if(first, refs_.begin() + static_cast<std::ptrdiff_t>(sp.end), [&](std::size_t s) {
        return !working_[slot_entity_[s]] || slot_want_[s] <= 0;
      });
      sp.end = static_cast<std::size_t>(live_end - refs_.begin());
    }
    deserve(total, w_sum);
    const bool gave = serve_orders(w_sum);
    drop_spectators();
    return gave;
  }

  // Deserved qshares: the weighted part of the total (held + free), water-filled so that an entity wanting
  // less than its part (in quanta) is deserved exactly its demand and the rest is shared by the others in the
  // same pass (DUCC: floor(total * w / W) of the free space alone, and later passes, which drift); then the
  // floors, the leftover qshares one each by largest remainder (ties: entity order; DUCC: entity order), and
  // what each entity already holds is taken off.
  void deserve(std::int64_t total, std::int64_t w_sum) {
    ++pass_no_;
    // Held + free, not the free space alone: splitting only what is left by weight again would take from an
    // entity what an earlier pass owed it but could not give at its order (a small class behind a class
    // with large-order work).
    std::int64_t held = 0;
    for (std::size_t e : alive_) held += got_q_[e];
    const std::int64_t whole = total + held;
    std::int64_t rest = whole, w_rest = w_sum;
    const auto need = [&](std::size_t e) { return got_q_[e] + demand_q_[e]; };
    by_need_.erase(std::remove_if(by_need_.begin(), by_need_.end(), [&](std::size_t e) { return !working_[e]; }),
                   by_need_.end());
    const auto less_need = [&](std::size_t a, std::size_t b) {
      if (equal_weights_) {
        if (need(a) != need(b)) return need(a) < need(b);
        return a < b;
      }
      const auto x = static_cast<__int128>(need(a)) * weight_[b];
      const auto y = static_cast<__int128>(need(b)) * weight_[a];
      if (x != y) return x < y;
      return a < b;
    };
    if (!std::is_sorted(by_need_.begin(), by_need_.end(), less_need)) std::sort(by_need_.begin(), by_need_.end(), less_need);
    zero_deserved_.clear();
    for (std::size_t e : by_need_) {
      if (w_rest <= 0) break;
      if (static_cast<__int128>(need(e)) * w_rest > static_cast<__int128>(rest) * weight_[e]) break;
      capped_at_[e] = pass_no_;
      target_[e] = need(e);
      rest -= need(e);
      w_rest -= weight_[e];
    }
    std::int64_t handed = 0;
    by_rem_.clear();
    for (std::size_t e : alive_) {
      if (capped_at_[e] != pass_no_) {
        target_[e] = w_rest > 0 ? rest * weight_[e] / w_rest : 0;
        if (!equal_weights_) rem_[e] = w_rest > 0 ? (rest * weight_[e]) % w_rest : 0;
        by_rem_.push_back(e);
      }
      handed += target_[e];
      pass_given_[e] = 0;
      out_of_w_[e] = 0;
    }
    if (!equal_weights_) {
      const auto larger_rem = [&](std::size_t a, std::size_t b) {
        if (rem_[a] != rem_[b]) return rem_[a] > rem_[b];
        return a < b;  // ties in entity order
      };
      if (!std::is_sorted(by_rem_.begin(), by_rem_.end(), larger_rem)) std::sort(by_rem_.begin(), by_rem_.end(), larger_rem);
    }
    for (std::size_t e : by_rem_) {
      if (handed >= whole) break;
      ++target_[e];
      ++handed;
    }
    for (std::size_t e : alive_) {
      deserved_[e] = std::max<std::int64_t>(0, target_[e] - got_q_[e]);
      if (deserved_[e] <= 0) zero_deserved_.push_back(e);
    }
  }

  // The orders, largest first: each hands out what its entities are entitled to. Returns whether any did.
  bool serve_orders(std::int64_t w_sum) {
    bool gave = false;
    bool first_order_done = false;
    std::int64_t w_cur = w_sum;
    // Satisfied entities stop diluting the others (once: DUCC subtracted again at every order).
    const auto retire = [&](std::size_t e) {
      if (working_[e] && !out_of_w_[e] && deserved_[e] - pass_given_[e] <= 0) {
        w_cur -= weight_[e];
        out_of_w_[e] = 1;
      }
    };
    for (const auto& sp : spans_) {
      const int o = sp.order;
      const auto first = refs_.begin() + static_cast<std::ptrdiff_t>(sp.begin);
      const auto last = refs_.begin() + static_cast<std::ptrdiff_t>(sp.end);
      if (first_order_done && std::none_of(first, last, [&](std::size_t s) {
            return deserved_[slot_entity_[s]] - pass_given_[slot_entity_[s]] > 0;
          }))
        continue;
      const std::int64_t avail = v_->nshares(o);
      if (avail <= 0) continue;
      // When every weighted part avail * w / W is under half a process, so is every room / o that is
      // smaller, and nothing is given at this order (most visits of a long pass loop).
      const bool gives_nothing = 2 * static_cast<__int128>(avail) * sp.max_weight < w_cur;
      const std::int64_t taken = gives_nothing ? 0 : serve_order(sp, avail, w_cur);
      if (taken > 0) {
        v_->take_shares(o, taken);
        gave = true;
      }
      // At the first order only the entities deserving nothing and those served here can be satisfied
      // (nobody else has been given anything yet); after it only the entities served at an order that gave.
      if (!first_order_done) {
        for (std::size_t e : zero_deserved_) retire(e);
        first_order_done = true;
      }
      if (taken > 0)
        for (auto it = first; it != last; ++it) retire(slot_entity_[*it]);
      if (w_cur <= 0) break;
    }
    return gave;
  }

  // Each entity's entitlement in processes at this order is the smaller of its weighted part of the
  // nshares available, avail * w / W, and what is left of its deserved quanta, room / o; as an exact
  // fraction num / den. Whole processes first, then the processes left over go one each by largest
  // remainder (ties: entity order). This is DUCC's "floor, and one whole process for a small entitlement"
  // generalised so that rounding never drifts by more than one process. Returns the nshares handed out.
  std::int64_t serve_order(const order_span& sp, std::int64_t avail, std::int64_t w_cur) {
    const int o = sp.order;
    parts_.clear();
    std::int64_t taken = 0;
    for (std::size_t k = sp.begin; k < sp.end; ++k) {
      const std::size_t s = refs_[k];
      const std::size_t e = slot_entity_[s];
      const std::int64_t want = slot_want_[s];
      if (!working_[e] || want <= 0) continue;
      const std::int64_t room = std::max<std::int64_t>(0, deserved_[e] - pass_given_[e]);
      if (room <= 0) continue;
      // avail * w / w_cur  vs  room / o  (compare avail * w * o with room * w_cur)
      std::int64_t num, den;
      if (static_cast<__int128>(avail) * weight_[e] * o <= static_cast<__int128>(room) * w_cur) {
        num = avail * weight_[e];
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
      parts_.push_back({s, whole, rem, den});
      taken += whole;
    }
    if (taken > avail) {  // cannot happen (sum of weighted parts <= avail); stay safe
      for (auto it = parts_.rbegin(); it != parts_.rend() && taken > avail; ++it) {
        const std::int64_t cut = std::min(it->whole, taken - avail);
        it->whole -= cut;
        taken -= cut;
      }
    }
    // Each entitlement is rounded half up, largest remainders first while nshares last: an entitlement of
    // half a process or more still gets a whole one (DUCC's round-up of small entitlements, UIMA-3664), a
    // sliver of one does not (DUCC gave a whole process for any sliver, which pushes counts more than one
    // process away from the weighted max-min share).
    if (taken < avail) {
      order_by_rem_.clear();
      for (std::size_t i = 0; i < parts_.size(); ++i)
        if (parts_[i].rem_num > 0 && 2 * parts_[i].rem_num >= parts_[i].den) order_by_rem_.push_back(i);
      std::sort(order_by_rem_.begin(), order_by_rem_.end(), [&](std::size_t a, std::size_t b) {
        const auto x = static_cast<__int128>(parts_[a].rem_num) * parts_[b].den;
        const auto y = static_cast<__int128>(parts_[b].rem_num) * parts_[a].den;
        if (x != y) return x > y;
        return a < b;  // ties in entity order
      });
      for (std::size_t i : order_by_rem_) {
        if (taken >= avail) break;
        ++parts_[i].whole;
        ++taken;
      }
    }
    for (const auto& pt : parts_) {
      if (pt.whole <= 0) continue;
      const std::size_t e = slot_entity_[pt.slot];
      slot_given_[pt.slot] += pt.whole;
      slot_want_[pt.slot] -= pt.whole;
      pass_given_[e] += pt.whole * o;
      demand_q_[e] -= pt.whole * o;
      got_q_[e] += pt.whole * o;
    }
    return taken;
  }

  // Drop entities that want nothing more, and spectators (nothing they want is available). A slot that
  // still wants something wanted it from the start, so it has a span; each span's order is asked once.
  void drop_spectators() {
    for (std::size_t sp = 0; sp < spans_.size(); ++sp) span_usable_[sp] = -1;
    const auto usable = [&](std::size_t s) {
      auto& u = span_usable_[slot_span_[s]];
      if (u < 0) u = v_->nshares(slot_order_[s]) > 0 ? 1 : 0;
      return u == 1;
    };
    std::size_t still = 0;
    for (std::size_t e : alive_) {
      bool can_use = false;
      for (std::size_t s = first_[e]; s < first_[e + 1] && !can_use; ++s)
        can_use = slot_want_[s] > 0 && slot_order_[s] > 0 && usable(s);
      if (can_use) {
        alive_[still++] = e;
      } else {
        working_[e] = 0;
        w_alive_ -= weight_[e];
      }
    }
    alive_.resize(still);
  }

  // Final bonus loop: rounding leftovers go to whoever can use a free block of exactly its order, each
  // entity's slots largest order first.
  void bonus() {
    auto& slots = bonus_slots_;
    slots.resize(slot_entity_.size());
    for (std::size_t s = 0; s < slots.size(); ++s) slots[s] = s;
    for (std::size_t e = 0; e < n_; ++e)
      std::sort(slots.begin() + static_cast<std::ptrdiff_t>(first_[e]), slots.begin() + static_cast<std::ptrdiff_t>(first_[e + 1]),
                [&](std::size_t a, std::size_t b) { return slot_order_[a] > slot_order_[b]; });
    // A slot that wants nothing more, or whose order has no block of exactly its size, is passed over for
    // good: wants only fall, and taking one nshare of order o from a block of size o leaves the blocks of
    // every other size as they were. So each sweep keeps only the slots that were served in it.
    bool gave = true;
    while (gave && v_->total_qshares() > 0) {
      gave = false;
      std::size_t kept = 0;
      for (std::size_t s : slots) {
        const int o = slot_order_[s];
        if (slot_want_[s] > 0 && v_->blocks(o) > 0) {
          ++slot_given_[s];
          --slot_want_[s];
          v_->take_shares(o, 1);
          gave = true;
          slots[kept++] = s;
        }
      }
      slots.resize(kept);
    }
  }

  void write_back() {
    for (std::size_t e = 0; e < n_; ++e) {
      auto& ent = es_[e];
      ent.given.assign(ent.wanted.size(), 0);
      for (std::size_t i = 0; i < ent.wanted.size(); ++i) {
        ent.given[i] = slot_given_[first_[e] + i];
        ent.wanted[i].second = slot_want_[first_[e] + i];
      }
    }
  }

  apportion_entity* es_ = nullptr;
  free_blocks* v_ = nullptr;
  std::size_t n_ = 0;
  bool equal_weights_ = true;
  // Per entity.
  std::vector<std::int64_t> weight_, demand_q_, deserved_, pass_given_, rem_;
  std::vector<std::int64_t> got_q_;    // qshares given in earlier passes
  std::vector<std::int64_t> target_;   // deserve's water-fill of held + free space
  std::vector<char> working_, out_of_w_;
  std::vector<std::uint64_t> capped_at_;  // the pass in which the water-fill last capped the entity
  std::uint64_t pass_no_ = 0;
  std::int64_t w_alive_ = 0;              // total weight of the working entities
  std::vector<std::size_t> zero_deserved_;  // working entities deserving nothing this pass
  std::vector<std::size_t> first_;   // entity e's slots are [first_[e], first_[e + 1])
  std::vector<std::size_t> alive_;   // the working entities, in entity order
  std::vector<std::size_t> by_need_;  // the working entities by demand per weight (the last pass's order)
  std::vector<std::size_t> by_rem_, order_by_rem_;
  std::vector<std::size_t> bonus_slots_;  // bonus()'s slots, each entity's largest order first
  std::vector<std::size_t> order_start_;  // build()'s counting sort: where each order's refs start
  // Per slot.
  std::vector<std::size_t> slot_entity_;
  std::vector<int> slot_order_;
  std::vector<std::int64_t> slot_want_, slot_given_;
  // Per order.
  std::vector<std::size_t> refs_;  // slots wanting something, grouped by order
  std::vector<order_span> spans_;
  std::vector<std::size_t> slot_span_;  // per slot in refs_: its span
  std::vector<signed char> span_usable_;  // drop_spectators' memo: the span's order has nshares (-1: not asked)
  struct part {
    std::size_t slot;
    std::int64_t whole;
    std::int64_t rem_num;
    std::int64_t den;
  };
  std::vector<part> parts_;
};

}  // namespace

class apportion_workspace::state : public apportioner {};

apportion_workspace::apportion_workspace() : state_(std::make_unique<state>()) {}
apportion_workspace::~apportion_workspace() = default;
apportion_workspace::apportion_workspace(apportion_workspace&&) noexcept = default;
apportion_workspace& apportion_workspace::operator=(apportion_workspace&&) noexcept = default;

void apportion_qshares(apportion_entity* first, std::size_t count, free_blocks& vshares,
                       apportion_workspace& workspace) {
  workspace.state_->run(first, count, vshares);
}

void apportion_qshares(std::vector<apportion_entity>& entities, free_blocks& vshares, apportion_workspace& workspace) {
  apportion_qshares(entities.data(), entities.size(), vshares, workspace);
}

void apportion_qshares(std::vector<apportion_entity>& entities, free_blocks& vshares) {
  apportion_workspace workspace;
  apportion_qshares(entities, vshares, workspace);
}

}  // namespace rmbus::core
