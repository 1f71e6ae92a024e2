#include "core/preemption_policy.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <utility>

#include "core/preemption.hpp"
#include "core/prefetch.hpp"
#include "core/sparing_room_index.hpp"
#include "core/what_of.hpp"

// choose_sparing_victims applies the header's rules as a pipeline of stages, each over the state it needs:
//   tally_units, keep_short_since   the (class, user) units, their short and surplus jobs, R2's "short since"
//   choose_claims                   R2 + R5: which jobs claim how many processes; the reclaim deadline
//   collect_victims                 R3 + R5: the victims, with the budgets and rooms that bound their taking
//   victims_by_machine              R3's order of the victims on each machine
//   machine_offers                  what each machine could still offer a claimant, for the room index
//   claim_placer                    R1: each claimed process onto the machine where it costs least

namespace rmbus::core {

std::int64_t sparing_hold_ms(const cluster_model& m) {
  return sparing_hold_epochs * std::max<std::int64_t>(1, m.settings.epoch_ms);
}

std::int64_t sparing_patience_ms(const cluster_model& m) {
  return sparing_patience_epochs * std::max<std::int64_t>(1, m.settings.epoch_ms);
}

namespace {

bool is_fair_job(const cluster_model& m, const job_rec& j) {
  return j.live && !j.refused && j.cls >= 0 && m.class_pool(j) >= 0 && m.policy_of(j) == policy::fair_share;
}

// Lowers the deadline `at` to `due`; 0 means no deadline yet.
void keep_earliest(std::int64_t& at, std::int64_t due) {
  if (at == 0 || due < at) at = due;
}

// ---- The units and their short and surplus jobs ----

struct user_totals {
  std::int64_t given_q = 0;      // quanta counted to its fair-share jobs
  std::int64_t held_q = 0;       // quanta they hold (not being removed)
  std::int64_t fair_q = 0;       // their pure fair share (quanta)
  int min_short_order = 0;       // smallest order among its jobs short of their counts (0: none)
  std::int64_t short_since = 0;  // when short by a process or more: since when, without a break
};

// Fair share is apportioned per class, then per user in it: the (class, user) pair is the unit here.
struct unit_tally {
  std::size_t n_users = 0;
  std::vector<user_totals> units;  // per unit, class-major
  std::vector<int> short_jobs;     // fair-share jobs holding less than their counts
  std::vector<int> surplus_jobs;   // fair-share jobs holding more than their counts

  std::size_t unit_of(const job_rec& j) const {
    return static_cast<std::size_t>(j.cls) * n_users + static_cast<std::size_t>(j.user_slot);
  }
  // Held / given: the most starved are served first, the furthest above their count lose first.
  double ratio_of(std::size_t u) const {
    const auto& t = units[u];
    return t.given_q > 0 ? static_cast<double>(t.held_q) / static_cast<double>(t.given_q) : 1e18;
  }
  // R2 counts no shortfall smaller than one process of the unit's short jobs' order.
  bool short_by_a_process(std::size_t u) const {
    const auto& t = units[u];
    return t.min_short_order != 0 && t.given_q - t.held_q >= t.min_short_order;
  }
};

// Also clears last round's claims (R4), in the same walk over every job record.
unit_tally tally_units(cluster_model& m) {
  unit_tally t;
  t.n_users = m.users.size();
  t.units.resize(m.classes.size() * t.n_users);
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    prefetch_ahead(m.jobs, i);
    auto& j = m.jobs[i];
    if (j.claim_q != 0) j.claim_q = 0;  // a write to every record would cost each its write-back
    if (!is_fair_job(m, j) || j.user_slot < 0) continue;
    auto& u = t.units[t.unit_of(j)];
    u.given_q += static_cast<std::int64_t>(j.given) * j.order;
    u.held_q += static_cast<std::int64_t>(m.current(j)) * j.order;
    u.fair_q += j.pfs_qshares;
    if (m.current(j) < j.given) {
      t.short_jobs.push_back(static_cast<int>(i));
      u.min_short_order = u.min_short_order == 0 ? j.order : std::min(u.min_short_order, j.order);
    } else if (m.current(j) > j.given) {
      t.surplus_jobs.push_back(static_cast<int>(i));
    }
  }
  return t;
}

// R2's patience: how long each unit has been short without a break. The units short now keep their time or
// start it; the model forgets the others, so that a break starts the count again.
void keep_short_since(cluster_model& m, unit_tally& t, std::int64_t now_ms) {
  std::map<std::pair<int, user_id>, std::int64_t> since;
  for (std::size_t e = 0; e < t.units.size(); ++e) {
    if (!t.short_by_a_process(e)) continue;
    auto& u = t.units[e];
    const std::pair<int, user_id> key{static_cast<int>(e / t.n_users), m.users[e % t.n_users]};
    const auto it = m.sparing_short_since.find(key);
    u.short_since = it == m.sparing_short_since.end() ? now_ms : it->second;
    since.emplace(key, u.short_since);
  }
  m.sparing_short_since = std::move(since);
}

// ---- R2 + R5: the claims ----

struct claim {
  int job;
  int processes;
  double ratio;  // its user's held / given: the most starved are served first
};

// R2: per unit, the quanta its jobs may claim: its whole shortfall if it is starved, else nothing. A unit not
// starved yet sets m.next_reclaim_ms to when its patience runs out.
std::vector<std::int64_t> starved_shortfalls(cluster_model& m, const unit_tally& t, std::int64_t now_ms) {
  const std::int64_t patience = sparing_patience_ms(m);
  std::vector<std::int64_t> left_to_claim(t.units.size(), 0);
  for (std::size_t u = 0; u < t.units.size(); ++u) {
    if (!t.short_by_a_process(u)) continue;
    const auto& tu = t.units[u];
    const std::int64_t deficit = tu.given_q - tu.held_q;
    // Starved: short by more than half of its count or holding less than half of its pure fair share (a ramp
    // by doubling is never short by more than half its count); or short, by less, for `patience` without a
    // break, which churn seldom allows but a standing gap always reaches.
    if (2 * deficit > tu.given_q || 2 * tu.held_q < tu.fair_q || now_ms - tu.short_since >= patience)
      left_to_claim[u] = deficit;
    else  // the round must run when the patience runs out, even if nothing else changes by then
      keep_earliest(m.next_reclaim_ms, tu.short_since + patience);
  }
  return left_to_claim;
}

// R2: a short job claims out of its unit's shortfall left, or, holding nothing, one process so that new work
// starts unless its user is at or above its count in the class.
bool may_claim(const cluster_model& m, const job_rec& j, std::int64_t left_to_claim, const user_totals& u) {
  return left_to_claim >= j.order || (m.current(j) == 0 && u.held_q < u.given_q);
}

std::int64_t processes_wanted(const cluster_model& m, const job_rec& j, std::int64_t left_to_claim,
                              const user_totals& u) {
  if (left_to_claim >= j.order)
    return std::min<std::int64_t>(j.given - m.current(j), left_to_claim / j.order);
  if (m.current(j) == 0 && u.held_q < u.given_q) return 1;  // new work starts with one process
  return 0;
}

// The short jobs that may claim, oldest first (R2 serves a user's jobs in that order). left_to_claim only
// falls, so no other may claim later: of some 5,000 short jobs a few hundred, so sort only them.
std::vector<int> claimants_oldest_first(const cluster_model& m, const unit_tally& t,
                                        const std::vector<std::int64_t>& left_to_claim,
                                        std::vector<int> jobs) {
  std::erase_if(jobs, [&](int ji) {
    const auto& j = m.jobs[static_cast<std::size_t>(ji)];
    const auto u = t.unit_of(j);
    return !may_claim(m, j, left_to_claim[u], t.units[u]);
  });
  std::sort(jobs.begin(), jobs.end(), [&](int a, int b) {
    return m.job_rank[static_cast<std::size_t>(a)] < m.job_rank[static_cast<std::size_t>(b)];
  });
  return jobs;
}

// R2 + R5: who claims how many processes, most starved user first. Writes the claimants' claim_q (R4) and
// claimed_at_ms, and lowers m.next_reclaim_ms to when a claim R5 holds back falls due.
std::vector<claim> choose_claims(cluster_model& m, unit_tally& t, std::int64_t now_ms) {
  const std::int64_t hold = sparing_hold_ms(m);
  auto left_to_claim = starved_shortfalls(m, t, now_ms);
  std::vector<claim> claims;
  for (int ji : claimants_oldest_first(m, t, left_to_claim, std::move(t.short_jobs))) {
    auto& j = m.jobs[static_cast<std::size_t>(ji)];
    const auto u = t.unit_of(j);
    const std::int64_t want = processes_wanted(m, j, left_to_claim[u], t.units[u]);
    if (want <= 0) continue;
    if (now_ms - j.shed_at_ms < hold) {  // R5: it just lost a process; do not take one back yet
      keep_earliest(m.next_reclaim_ms, j.shed_at_ms + hold);
      continue;
    }
    if (left_to_claim[u] >= j.order) left_to_claim[u] -= want * j.order;
    j.claim_q = static_cast<int>(want) * j.order;
    j.claimed_at_ms = now_ms;
    claims.push_back({ji, static_cast<int>(want), t.ratio_of(u)});
  }
  std::stable_sort(claims.begin(), claims.end(),
                   [](const claim& a, const claim& b) { return a.ratio < b.ratio; });
  return claims;
}

// ---- R3: the victims ----

// Per machine slot, the space a claimed process may use.
struct machine_space {
  std::vector<int> spare;       // space free or being freed that no claim took yet
  std::vector<char> usable;     // schedulable: a victim there frees space someone may use
  std::vector<char> candidate;  // where a claimed process may go: machines with victims or space being freed
                                // (others were full or had no room for what What Of placed)
};

machine_space machine_space_of(const cluster_model& m) {
  machine_space s;
  s.spare.assign(m.machines.size(), 0);
  s.usable.assign(m.machines.size(), 0);
  s.candidate.assign(m.machines.size(), 0);
  for (std::size_t mi = 0; mi < m.machines.size(); ++mi) {
    prefetch_ahead(m.machines, mi);
    const auto& mc = m.machines[mi];
    s.usable[mi] = mc.schedulable() ? 1 : 0;
    s.spare[mi] = s.usable[mi] != 0 ? std::max(0, mc.free()) + mc.removing : 0;
    s.candidate[mi] = s.usable[mi] != 0 && mc.removing > 0 ? 1 : 0;
  }
  return s;
}

struct victim_key {
  bool idle = false;    // less work left than its processes can take
  double over = 0;      // its user's held / given
  double per_proc = 0;  // work left per process
};

struct victim {  // a share R3 lets go, with what the choice reads of it
  int share;
  int machine;
  int job;
  int order;
  std::size_t unit;  // its job's (class, user)
};

// R3: who may lose what. A user may lose down to its count, a job down to its count.
struct victim_set {
  std::vector<victim> list;          // job by job (a job's are adjacent)
  std::vector<int> first_of_job;     // per job slot: its first victim in list
  std::vector<std::int64_t> budget;  // per unit: quanta it may still lose
  std::vector<int> room;             // per job slot: processes it may still lose
  std::vector<victim_key> keys;      // per job slot: what R3's order reads
  std::int64_t held_back_until = 0;  // the first time a victim R5 holds back becomes takeable

  bool takeable(const victim& v, const std::vector<char>& chosen) const {
    return !chosen[static_cast<std::size_t>(v.share)] && room[static_cast<std::size_t>(v.job)] > 0 &&
           budget[v.unit] >= v.order;
  }
};

// Reads of scattered records, each asked for ahead: the lines of a job record collect_victims reads, its
// share list, and its shares.
[[gnu::always_inline]] inline void prefetch_surplus_ahead(const cluster_model& m,
                                                          const std::vector<int>& jobs, std::size_t k) {
  if (k + records_ahead < jobs.size()) {
    const auto& ahead = m.jobs[static_cast<std::size_t>(jobs[k + records_ahead])];
    prefetch_record(&ahead);
    __builtin_prefetch(&ahead.shares);
    __builtin_prefetch(&ahead.claimed_at_ms);
  }
  if (k + 4 < jobs.size()) __builtin_prefetch(m.jobs[static_cast<std::size_t>(jobs[k + 4])].shares.data());
  if (k + 2 < jobs.size())
    for (int s : m.jobs[static_cast<std::size_t>(jobs[k + 2])].shares)
      __builtin_prefetch(&m.shares[static_cast<std::size_t>(s)]);
}

// A surplus job's shares that may go: not leaving already, not fixed in place, on a machine whose space
// someone may use. Their machines become candidates.
void add_victims_of(const cluster_model& m, const unit_tally& t, int ji, machine_space& space,
                    victim_set& vs) {
  const auto& j = m.jobs[static_cast<std::size_t>(ji)];
  vs.room[static_cast<std::size_t>(ji)] = m.current(j) - j.given;
  vs.keys[static_cast<std::size_t>(ji)] = {j.cap.by_work < m.current(j), t.ratio_of(t.unit_of(j)),
                                           static_cast<double>(j.cap.by_work) / std::max(1, m.current(j))};
  vs.first_of_job[static_cast<std::size_t>(ji)] = static_cast<int>(vs.list.size());
  for (int s : j.shares) {
    const auto& sh = m.shares[static_cast<std::size_t>(s)];
    if (sh.removing() || sh.fixed || sh.blacklisted) continue;
    if (space.usable[static_cast<std::size_t>(sh.machine)] == 0) continue;
    vs.list.push_back({s, sh.machine, ji, sh.order, t.unit_of(j)});
    space.candidate[static_cast<std::size_t>(sh.machine)] = 1;
  }
}

// R3 + R5: only units above their count lose, and a job that claimed within `hold` loses nothing yet.
victim_set collect_victims(const cluster_model& m, const unit_tally& t, machine_space& space,
                           std::int64_t now_ms) {
  const std::int64_t hold = sparing_hold_ms(m);
  victim_set vs;
  vs.budget.assign(t.units.size(), 0);
  for (std::size_t u = 0; u < t.units.size(); ++u)
    vs.budget[u] = std::max<std::int64_t>(0, t.units[u].held_q - t.units[u].given_q);
  vs.room.assign(m.jobs.size(), 0);
  vs.keys.assign(m.jobs.size(), victim_key{});
  vs.first_of_job.assign(m.jobs.size(), 0);
  for (std::size_t k = 0; k < t.surplus_jobs.size(); ++k) {
    prefetch_surplus_ahead(m, t.surplus_jobs, k);
    const int ji = t.surplus_jobs[k];
    const auto& j = m.jobs[static_cast<std::size_t>(ji)];
    if (vs.budget[t.unit_of(j)] < j.order) continue;
    if (now_ms - j.claimed_at_ms < hold) {  // R5: it just gained; do not take it back yet
      keep_earliest(vs.held_back_until, j.claimed_at_ms + hold);
      continue;
    }
    add_victims_of(m, t, ji, space, vs);
  }
  return vs;
}

// Per machine, its victims in R3's order: grouped by machine here, each machine's sorted when a plan first
// reads them (the order depends on nothing the choice changes).
class victims_by_machine {
 public:
  victims_by_machine(const cluster_model& m, const victim_set& vs)
      : m_(m), vs_(vs), begin_(m.machines.size() + 1, 0), on_(vs.list.size()), sorted_(m.machines.size(), 0) {
    for (const auto& v : vs.list) ++begin_[static_cast<std::size_t>(v.machine) + 1];
    for (std::size_t mi = 0; mi < m.machines.size(); ++mi) begin_[mi + 1] += begin_[mi];
    std::vector<int> fill(begin_.begin(), begin_.end() - 1);
    for (std::size_t v = 0; v < vs.list.size(); ++v)
      on_[static_cast<std::size_t>(fill[static_cast<std::size_t>(vs.list[v].machine)]++)] =
          static_cast<int>(v);
  }

  std::span<const int> on(int mi) {
    const auto b = on_.begin() + begin_[static_cast<std::size_t>(mi)];
    const auto e = on_.begin() + begin_[static_cast<std::size_t>(mi) + 1];
    if (sorted_[static_cast<std::size_t>(mi)] == 0) {
      sorted_[static_cast<std::size_t>(mi)] = 1;
      std::sort(b, e, [this](int x, int y) { return goes_first(x, y); });
    }
    return {b, e};
  }

 private:
  // R3's order: idle first, then the unit furthest above its count, then the least work left per process,
  // then the investment order.
  bool goes_first(int x, int y) const {
    const auto& va = vs_.list[static_cast<std::size_t>(x)];
    const auto& vb = vs_.list[static_cast<std::size_t>(y)];
    const auto& ka = vs_.keys[static_cast<std::size_t>(va.job)];
    const auto& kb = vs_.keys[static_cast<std::size_t>(vb.job)];
    if (ka.idle != kb.idle) return ka.idle;
    if (ka.over != kb.over) return ka.over > kb.over;
    if (ka.per_proc != kb.per_proc) return ka.per_proc < kb.per_proc;
    return investment_less(m_, m_.shares[static_cast<std::size_t>(va.share)],
                           m_.shares[static_cast<std::size_t>(vb.share)]);
  }

  const cluster_model& m_;
  const victim_set& vs_;
  std::vector<int> begin_;  // per machine slot: its first entry in on_ (one past the last slot at the end)
  std::vector<int> on_;     // victims, machine by machine
  std::vector<char> sorted_;
};

// ---- What each machine could offer a claimant ----

// The takeable victims' quanta per machine, and per unit its counted victims, so that a budget falling below
// some of their orders finds them.
struct offer_counts {
  std::vector<char> counted;              // per victim: its quanta are in its machine's offer
  std::vector<int> offer;                 // per machine slot
  std::vector<int> unit_begin, unit_end;  // per unit: its span in unit_victims
  std::vector<int> unit_victims;
  std::vector<int> unit_top;  // per unit: at least the largest order among its counted victims
};

offer_counts count_offers(const cluster_model& m, const victim_set& vs, const std::vector<char>& chosen) {
  offer_counts c;
  const std::size_t n_units = vs.budget.size();
  c.counted.assign(vs.list.size(), 0);
  c.offer.assign(m.machines.size(), 0);
  c.unit_begin.assign(n_units + 1, 0);
  c.unit_end.assign(n_units, 0);
  c.unit_top.assign(n_units, 0);
  for (const auto& v : vs.list) ++c.unit_begin[v.unit + 1];
  for (std::size_t u = 0; u < n_units; ++u) c.unit_begin[u + 1] += c.unit_begin[u];
  std::copy(c.unit_begin.begin(), c.unit_begin.end() - 1, c.unit_end.begin());
  c.unit_victims.resize(vs.list.size());
  for (std::size_t k = 0; k < vs.list.size(); ++k) {
    const auto& v = vs.list[k];
    c.unit_victims[static_cast<std::size_t>(c.unit_end[v.unit]++)] = static_cast<int>(k);
    if (!vs.takeable(v, chosen)) continue;
    c.counted[k] = 1;
    c.offer[static_cast<std::size_t>(v.machine)] += v.order;
    c.unit_top[v.unit] = std::max(c.unit_top[v.unit], v.order);
  }
  return c;
}

std::vector<int> reach_of(const machine_space& space, const offer_counts& c) {
  std::vector<int> reach(space.spare.size());
  for (std::size_t mi = 0; mi < reach.size(); ++mi) reach[mi] = space.spare[mi] + c.offer[mi];
  return reach;
}

// What each machine could offer a claimant: its spare quanta and its takeable victims' (offer), kept as
// victims go out of reach (chosen, their job down to its count, their unit's budget below their order; none
// comes back, as budgets and rooms only fall), so that the room index (sparing_room_index.hpp) offers
// plan_on only machines where it may succeed, in R1's order.
class machine_offers {
 public:
  machine_offers(const cluster_model& m, const victim_set& vs, const machine_space& space,
                 const std::vector<char>& chosen)
      : vs_(vs),
        space_(space),
        c_(count_offers(m, vs, chosen)),
        rooms_(m, space.candidate, space.spare, reach_of(space, c_)) {}

  sparing_room_index& rooms() { return rooms_; }

  // Tells the index a machine's figures now.
  void refresh(int mi) {
    rooms_.set(mi, space_.spare[static_cast<std::size_t>(mi)],
               space_.spare[static_cast<std::size_t>(mi)] + c_.offer[static_cast<std::size_t>(mi)]);
  }

  // Victim k is out of reach.
  void uncount(int k) {
    if (c_.counted[static_cast<std::size_t>(k)] == 0) return;
    c_.counted[static_cast<std::size_t>(k)] = 0;
    const auto& v = vs_.list[static_cast<std::size_t>(k)];
    c_.offer[static_cast<std::size_t>(v.machine)] -= v.order;
    refresh(v.machine);
  }

  // All of a job's victims are out of reach: it is down to its count.
  void uncount_job(int job) {
    for (auto t = static_cast<std::size_t>(vs_.first_of_job[static_cast<std::size_t>(job)]);
         t < vs_.list.size() && vs_.list[t].job == job; ++t)
      uncount(static_cast<int>(t));
  }

  // The unit's victims of an order above its budget are out of reach; and forgets the unit's victims no
  // longer counted, so that the next fall of its budget does not walk them again.
  void drop_above_budget(std::size_t u) {
    if (c_.unit_top[u] <= vs_.budget[u]) return;
    int kept = c_.unit_begin[u], top = 0;
    for (int i = c_.unit_begin[u]; i < c_.unit_end[u]; ++i) {
      const int k = c_.unit_victims[static_cast<std::size_t>(i)];
      const int order = vs_.list[static_cast<std::size_t>(k)].order;
      if (order > vs_.budget[u]) uncount(k);
      if (c_.counted[static_cast<std::size_t>(k)] == 0) continue;
      c_.unit_victims[static_cast<std::size_t>(kept++)] = k;
      top = std::max(top, order);
    }
    c_.unit_end[u] = kept;
    c_.unit_top[u] = top;
  }

 private:
  const victim_set& vs_;
  const machine_space& space_;
  offer_counts c_;
  sparing_room_index rooms_;  // declared after c_: built from its offers
};

// ---- R1: placing the claimed processes ----

// R1: each claimed process gets one machine: the one where it fits with the fewest quanta preempted (none
// where space is being freed already), by name on equal cost. Only victims' shares are taken.
class claim_placer {
 public:
  claim_placer(cluster_model& m, std::int64_t now_ms, machine_space space, victim_set victims,
               sparing_choice& out)
      : m_(m),
        now_ms_(now_ms),
        out_(out),
        space_(std::move(space)),
        vs_(std::move(victims)),
        by_machine_(m, vs_),
        offers_(m, vs_, space_, out.chosen) {}
  claim_placer(const claim_placer&) = delete;  // its members refer to one another
  claim_placer& operator=(const claim_placer&) = delete;

  // Places the claim's processes one by one, until one finds no room (then the claim waits).
  void place(const claim& c);

 private:
  // The machine R1 chooses for one process of j, with its plan in picked_; -1 if nowhere can make room.
  int machine_for(const job_rec& j, int pool);
  // The victims to preempt on machine `mi` so that `order` quanta are spare there, into picked_; false if
  // impossible.
  bool plan_on(int mi, int order);
  // Records picked_ as chosen, and the space they free on `machine` as the claimant's.
  void take_picked(int machine, int order);

  cluster_model& m_;
  const std::int64_t now_ms_;
  sparing_choice& out_;
  machine_space space_;
  victim_set vs_;
  victims_by_machine by_machine_;
  machine_offers offers_;
  std::vector<int> picked_;  // victims: plan_on's plan
  // plan_on's: the budget each victim in picked_ draws from its unit.
  std::vector<std::pair<std::size_t, std::int64_t>> spent_;
  // A claim that may run anywhere and found no room finds none for the same order and pool until something
  // is chosen: nothing plan_on or the index read has changed.
  std::vector<std::pair<int, int>> no_room_;  // (order, pool)
};

void claim_placer::place(const claim& c) {
  const auto& j = m_.jobs[static_cast<std::size_t>(c.job)];
  const int pool = m_.class_pool(j);
  const bool anywhere = j.no_hosts || j.item.hosts.empty();
  const std::pair<int, int> kind{j.order, pool};
  for (int p = 0; p < c.processes; ++p) {
    const bool known_roomless =
        anywhere && std::find(no_room_.begin(), no_room_.end(), kind) != no_room_.end();
    const int best = known_roomless ? -1 : machine_for(j, pool);
    if (best < 0) {  // nowhere to make room: the claim waits, and is looked at again when R5 lets go
      if (anywhere) no_room_.push_back(kind);
      if (vs_.held_back_until > 0) keep_earliest(m_.next_reclaim_ms, vs_.held_back_until);
      return;
    }
    no_room_.clear();
    take_picked(best, j.order);
  }
}

int claim_placer::machine_for(const job_rec& j, int pool) {
  auto& rooms = offers_.rooms();
  int best = -1;
  for (int mi = rooms.best(j.order, pool); mi >= 0; mi = rooms.best(j.order, pool)) {
    if (host_allowed(j, m_.machines[static_cast<std::size_t>(mi)]) && plan_on(mi, j.order)) {
      best = mi;
      break;
    }
    rooms.pass_over(mi);
  }
  rooms.restore();
  return best;
}

bool claim_placer::plan_on(int mi, int order) {
  picked_.clear();
  spent_.clear();
  int freed = space_.spare[static_cast<std::size_t>(mi)];
  for (const int k : by_machine_.on(mi)) {
    if (freed >= order) break;
    const auto& v = vs_.list[static_cast<std::size_t>(k)];
    if (!vs_.takeable(v, out_.chosen)) continue;
    // What this plan already draws from the victim's unit budget and job room.
    std::int64_t drawn = 0;
    int same_job = 0;
    for (const auto& [u, q] : spent_) drawn += u == v.unit ? q : 0;
    for (int t : picked_) same_job += vs_.list[static_cast<std::size_t>(t)].job == v.job;
    if (vs_.budget[v.unit] - drawn < v.order || vs_.room[static_cast<std::size_t>(v.job)] <= same_job)
      continue;
    picked_.push_back(k);
    spent_.emplace_back(v.unit, v.order);
    freed += v.order;
  }
  return freed >= order;
}

void claim_placer::take_picked(int machine, int order) {
  int freed = 0;
  for (int k : picked_) {
    const auto& v = vs_.list[static_cast<std::size_t>(k)];
    out_.chosen[static_cast<std::size_t>(v.share)] = 1;
    ++out_.shed[static_cast<std::size_t>(v.job)];
    --vs_.room[static_cast<std::size_t>(v.job)];
    vs_.budget[v.unit] -= v.order;
    m_.jobs[static_cast<std::size_t>(v.job)].shed_at_ms = now_ms_;
    freed += v.order;
    offers_.uncount(k);
    if (vs_.room[static_cast<std::size_t>(v.job)] == 0) offers_.uncount_job(v.job);
    offers_.drop_above_budget(v.unit);
  }
  space_.spare[static_cast<std::size_t>(machine)] += freed - order;  // the claimant's from now on
  offers_.refresh(machine);
}

}  // namespace

sparing_choice choose_sparing_victims(cluster_model& m, std::int64_t now_ms) {
  sparing_choice out;
  out.shed.assign(m.jobs.size(), 0);
  out.chosen.assign(m.shares.size(), 0);
  auto tally = tally_units(m);
  keep_short_since(m, tally, now_ms);
  if (tally.short_jobs.empty()) return out;
  const auto claims = choose_claims(m, tally, now_ms);
  if (claims.empty()) return out;
  auto space = machine_space_of(m);
  auto victims = collect_victims(m, tally, space, now_ms);
  claim_placer placer(m, now_ms, std::move(space), std::move(victims), out);
  for (const auto& c : claims) placer.place(c);
  return out;
}

}  // namespace rmbus::core
