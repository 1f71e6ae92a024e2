// What rm.state lists from publication's tables (actors/round_listing.hpp), and rm.schedule.changes made from
// what a round applied: over random rounds of full and change plans on several pools, refusals by
// differencing that overlap the pools' jobs, pools dropped by reconfiguration and rounds taken back by the
// guard, the changes equal those of comparing the whole listings (messages::make_schedule_changes), and the
// listing follows the merge rule (a refusal over a pool's entry, the later pool over the earlier); the last
// listing with the changes applied is the new one.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "actors/round_listing.hpp"
#include "messages/schedule_tally.hpp"

using namespace rmbus;
using namespace rmbus::actors;
namespace msg = rmbus::messages;

namespace {

msg::job_schedule random_job(std::mt19937& rng, const std::string& id) {
  std::uniform_int_distribution<int> small(0, 3);
  msg::job_schedule j;
  j.id = id;
  j.status = small(rng) == 0 ? msg::job_status::pending : msg::job_status::scheduled;
  j.memory_mb = 1024u * (1 + small(rng));
  j.user = "u" + std::to_string(small(rng));
  j.class_name = "c" + std::to_string(small(rng));  // what the tally counts by
  j.given = static_cast<std::uint64_t>(small(rng));
  j.demand = static_cast<std::uint64_t>(small(rng) + small(rng));
  for (int k = small(rng); k > 0; --k) {
    msg::share_schedule s;
    s.id = id + "." + std::to_string(k);
    s.node = "n" + std::to_string(small(rng));
    s.quanta = static_cast<std::uint64_t>(1 + small(rng));
    s.status = static_cast<msg::share_status>(small(rng));
    j.shares.push_back(s);
  }
  return j;
}

std::string job_id(int k) { return "j" + std::to_string(k); }

// The merge rule spelled out: pools in name order, each entry replacing one of the same id, refusals last.
std::vector<msg::job_schedule> merged(const plan_tables& tables, const std::set<std::string>& pools,
                                      const std::vector<msg::refused_work>& refused) {
  std::map<std::string, msg::job_schedule> all;
  for (const auto& p : pools)
    if (const auto* t = tables.table(p))
      for (const auto& [id, j] : *t) all[id] = j;
  for (const auto& r : refused) {
    msg::job_schedule s;
    s.id = r.id;
    s.status = msg::job_status::refused;
    s.reason = r.reason;
    s.user = r.user;
    all[r.id] = s;
  }
  std::vector<msg::job_schedule> out;
  for (auto& [id, j] : all) out.push_back(std::move(j));
  return out;
}

msg::rm_state state_of(std::uint64_t cycle, msg::schedule_listing jobs) {
  msg::rm_state s;
  s.cycle = cycle;
  s.jobs = std::move(jobs);
  for (const auto& j : s.jobs) s.encoded_jobs.push_back(msg::encode_job_entry(j));
  s.tally = std::make_shared<const msg::schedule_tally>(msg::tally_of(s.jobs));
  return s;
}

}  // namespace

TEST_CASE("rm.state's listing: a refusal over a pool's entry, the later pool over the earlier, sorted by id") {
  plan_tables tables;
  auto plan = [&](const std::string& pool, std::vector<std::pair<std::string, std::string>> jobs) {
    msg::pool_plan p;
    p.pool = pool;
    p.generation = 1;
    p.plan_seq = 1;
    for (const auto& [id, reason] : jobs) {
      msg::job_schedule j;
      j.id = id;
      j.reason = reason;
      p.jobs.push_back(j);
    }
    REQUIRE(tables.receive(p).follows);
    tables.apply(p);
  };
  plan("alpha", {{"a", "alpha"}, {"b", "alpha"}, {"c", "alpha"}});
  plan("beta", {{"b", "beta"}, {"d", "beta"}});
  const std::vector<msg::refused_work> refused{{"c", "u1", "no class"}, {"e", "u2", "no class"}};
  const auto listed = list_round(tables, {"alpha", "beta"}, refused);
  std::vector<std::string> seen;
  for (const auto& j : listed) seen.push_back(j.id + ":" + j.reason);
  CHECK(seen == std::vector<std::string>{"a:alpha", "b:beta", "c:no class", "d:beta", "e:no class"});
  CHECK(listed[2].status == msg::job_status::refused);
  // A pool not configured is not listed, whatever its table holds.
  CHECK(list_round(tables, {"alpha"}, {}).size() == 3);
}

TEST_CASE("rm.schedule.changes from what a round applied equals the comparison of the whole listings, over random rounds") {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    INFO("seed " << seed);
    // Seeds past 40: one pool and no refusals, the round listing_changes takes a shorter way for.
    const bool one_pool = seed > 40;
    const std::vector<std::string> universe =
        one_pool ? std::vector<std::string>{"alpha"} : std::vector<std::string>{"alpha", "beta", "gamma"};
    std::mt19937 rng{seed};
    auto chance = [&](int percent) { return std::uniform_int_distribution<int>(0, 99)(rng) < percent; };
    std::uniform_int_distribution<int> any_job(0, 29);
    plan_tables tables;
    std::map<std::string, std::uint64_t> seq;  // pool -> last plan_seq sent
    listed_before listed;
    std::set<std::string> pools{universe.begin(), universe.end()};
    msg::rm_state published = state_of(0, {});
    std::uint64_t base = 0;
    for (std::uint64_t cycle = 1; cycle <= 60; ++cycle) {
      INFO("cycle " << cycle);
      // Reconfiguration now and then: a pool leaves or comes back.
      if (chance(10)) {
        const auto& p = universe[std::uniform_int_distribution<std::size_t>(0, universe.size() - 1)(rng)];
        if (pools.count(p) && pools.size() > 1) pools.erase(p);
        else pools.insert(p);
      }
      std::vector<std::string> gone;
      for (const auto& [pool, t] : tables.tables())
        if (!pools.count(pool)) gone.push_back(pool);
      for (const auto& pool : gone) {
        listed.dropped.emplace(pool, *tables.table(pool));
        tables.drop(pool);
        seq.erase(pool);
      }
      for (const auto& pool : pools) {
        if (!chance(70)) continue;
        msg::pool_plan p;
        p.pool = pool;
        p.generation = 1;
        p.plan_seq = ++seq[pool];
        const auto* table = tables.table(pool);
        if (table == nullptr || p.plan_seq == 1 || chance(10)) {  // a full plan
          std::set<std::string> ids;
          for (int k = std::uniform_int_distribution<int>(0, 12)(rng); k > 0; --k) ids.insert(job_id(any_job(rng)));
          for (const auto& id : ids) p.jobs.push_back(random_job(rng, id));
        } else {
          p.base_plan_seq = p.plan_seq - 1;
          std::set<std::string> touched;
          for (int k = std::uniform_int_distribution<int>(0, 4)(rng); k > 0; --k) {
            const auto id = job_id(any_job(rng));
            if (!touched.insert(id).second) continue;
            auto now = table->find(id);
            if (now != table->end() && chance(30)) p.removed_jobs.push_back(id);
            else if (now != table->end() && chance(30)) p.jobs.push_back(now->second);  // rewritten, unchanged
            else p.jobs.push_back(random_job(rng, id));
          }
          std::sort(p.jobs.begin(), p.jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
        }
        REQUIRE(tables.receive(p).follows);
        tables.apply(p);
      }
      std::vector<msg::refused_work> refused;
      for (int k = std::uniform_int_distribution<int>(0, one_pool ? 0 : 3)(rng); k > 0; --k)
        refused.push_back({job_id(any_job(rng)), "u9", chance(50) ? "no class" : "unknown class x"});
      // The guard takes a pool's round back now and then (its next plan must be full).
      if (chance(15)) {
        const auto& p = *pools.begin();
        tables.rollback(p);
        tables.break_chain(p);
        seq[p] = 0;
      }
      // A round not published at all (every pool taken back) keeps the listing and its base as they were.
      if (chance(5)) {
        std::vector<std::string> applied;
        for (const auto& [p, jobs] : tables.applied()) applied.push_back(p);
        for (const auto& p : applied) {
          tables.rollback(p);
          tables.break_chain(p);
          seq[p] = 0;
        }
        continue;
      }
      const auto listing = list_round(tables, pools, refused);
      REQUIRE(listing == merged(tables, pools, refused));
      const auto after = state_of(cycle, listing);
      const auto changes = listing_changes(tables, pools, refused, listed, cycle, base);
      const auto expected = msg::make_schedule_changes(base, published, after);
      CHECK(changes.cycle == cycle);
      CHECK(changes.base_cycle == base);
      CHECK_FALSE(changes.full);
      REQUIRE(changes.jobs == expected.jobs);
      std::set<std::string> removed{changes.removed.begin(), changes.removed.end()};
      REQUIRE(removed == std::set<std::string>{expected.removed.begin(), expected.removed.end()});
      // rm.state kept between rounds: the last listing with these changes applied is this one.
      // Its encoded entries follow: each one is the entry packed afresh.
      auto kept = published;
      apply_listing_changes(kept, changes.jobs, changes.removed);
      REQUIRE(kept.jobs == listing);
      REQUIRE(kept.encoded_jobs.size() == listing.size());
      for (std::size_t k = 0; k < listing.size(); ++k) REQUIRE(kept.encoded_jobs[k] == msg::encode_job_entry(listing[k]));
      // So does its tally, a new one: the one the last rm.state carried (a reader may hold it) is unchanged.
      REQUIRE(kept.tally != published.tally);
      REQUIRE(*kept.tally == msg::tally_of(listing));
      REQUIRE(*published.tally == msg::tally_of(published.jobs));
      // Published: the tables committed, what the listing was made of remembered.
      tables.commit();
      listed.pools = pools;
      listed.refused.clear();
      for (const auto& r : refused) listed.refused.insert_or_assign(r.id, r);
      listed.dropped.clear();
      published = after;
      base = cycle;
    }
  }
}

TEST_CASE("a few jobs coming and going are inserted and erased where they lie and the listing stays sorted with its encoded entries") {
  std::mt19937 rng{7};
  auto id_of = [](int k) {  // zero-padded, so that id order is number order
    std::string s = std::to_string(k);
    return "j" + std::string(4 - s.size(), '0') + s;
  };
  std::map<std::string, msg::job_schedule> expected;
  for (int k = 0; k < 80; k += 2) expected[id_of(k)] = random_job(rng, id_of(k));
  std::vector<msg::job_schedule> first;
  for (const auto& [id, j] : expected) first.push_back(j);
  auto state = state_of(1, first);

  auto check = [&] {
    std::vector<msg::job_schedule> want;
    for (const auto& [id, j] : expected) want.push_back(j);
    REQUIRE(state.jobs == want);
    REQUIRE(state.encoded_jobs.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k)
      REQUIRE(state.encoded_jobs[k] == msg::encode_job_entry(want[k]));
    REQUIRE(*state.tally == msg::tally_of(want));
  };
  // One round: `adds` new ids, `drops` ids gone (an unknown one among them is ignored), one entry changed.
  auto round = [&](const std::vector<int>& adds, const std::vector<int>& drops) {
    std::vector<msg::job_schedule> changed;
    for (int k : adds) {
      changed.push_back(random_job(rng, id_of(k)));
      expected[id_of(k)] = changed.back();
    }
    std::vector<std::string> removed;
    for (int k : drops) {
      removed.push_back(id_of(k));
      expected.erase(id_of(k));
    }
    // The first entry listed before this round changes too (named once: an id twice in one round is no
    // delta).
    for (const auto& [id, j] : expected) {
      if (std::any_of(adds.begin(), adds.end(), [&](int k) { return id_of(k) == id; })) continue;
      auto kept = j;
      kept.memory_mb += 1024;
      expected[id] = kept;
      changed.push_back(kept);
      break;
    }
    apply_listing_changes(state, changed, removed);
    check();
  };

  round({1}, {0});            // the first entry goes, a new one takes its place
  round({101}, {78});         // the last goes, one arrives after every other
  round({41, 43}, {40, 999});  // two in the middle; an id never listed is ignored
  // From here on the listing has room: a few edits move no entry to a new array.
  const auto* entries = state.jobs.owners().data();
  const auto* texts = state.encoded_jobs.data();
  round({3, 5, 7, 9}, {2, 4, 6, 8});
  round({-1}, {});  // "j00-1" sorts before every other id
  round({}, {1, 101});
  CHECK(state.jobs.owners().data() == entries);
  CHECK(state.encoded_jobs.data() == texts);
  // More than a few: rebuilt in one pass, the same listing.
  round({11, 13, 15, 17, 19}, {10, 12, 14, 16, 18});
  CHECK(state.jobs.size() == expected.size());
}

TEST_CASE("a listing made whole keeps room: the next rounds' arrivals are inserted without moving it") {
  // rm.state after a full round is list_round's listing; a change's round inserts its arrivals into it in
  // place. Without room, the first arrival moved all 100,000 entries to a larger array on the path of a change.
  plan_tables tables;
  msg::pool_plan p;
  p.pool = "alpha";
  p.generation = 1;
  p.plan_seq = 1;
  for (int k = 0; k < 2000; ++k) p.jobs.emplace_back().id = job_id(2 * k);  // even ids only
  REQUIRE(tables.receive(p).follows);
  tables.apply(p);
  for (const bool one_pool : {true, false}) {
    INFO((one_pool ? "one pool" : "a pool and a refusal (sorted and merged)"));
    const std::vector<msg::refused_work> refused{{job_id(9999), "u1", "no class"}};
    auto state = state_of(1, list_round(tables, {"alpha"}, one_pool ? std::vector<msg::refused_work>{} : refused));
    state.encoded_jobs.reserve(state.jobs.capacity());  // as publication keeps them
    const auto* jobs = state.jobs.owners().data();
    const auto* encoded = state.encoded_jobs.data();
    for (int k = 0; k < 100; ++k) {
      msg::job_schedule arrival;
      arrival.id = job_id(40 * k + 1);  // odd: new, spread over the listing
      apply_listing_changes(state, {arrival}, {});
      REQUIRE(state.jobs.owners().data() == jobs);
      REQUIRE(state.encoded_jobs.data() == encoded);
    }
    CHECK(std::is_sorted(state.jobs.begin(), state.jobs.end(),
                         [](const auto& a, const auto& b) { return a.id < b.id; }));
    CHECK(state.jobs.size() == (one_pool ? 2100u : 2101u));
  }
}

TEST_CASE("a listing kept without a tally (one decoded, not counted) is edited and still has none") {
  std::mt19937 rng{3};
  auto state = state_of(1, {random_job(rng, "j1"), random_job(rng, "j3")});
  state.tally.reset();
  apply_listing_changes(state, {random_job(rng, "j2"), random_job(rng, "j3")}, {"j1"});
  CHECK(state.jobs.size() == 2);
  CHECK(state.tally == nullptr);
}

TEST_CASE(
    "a round's preemptions and evictions are the shares newly so, whatever order the two versions list them "
    "in") {
  auto share = [](std::string id, msg::share_status s) {
    return msg::share_schedule{std::move(id), "n1", 1, s, {}};
  };
  using st = msg::share_status;
  msg::job_schedule before;
  before.shares = {share("a", st::running), share("b", st::preempt), share("c", st::running),
                   share("d", st::running)};
  msg::job_schedule now;
  // d preempted and listed first, b still preempted, c now evicted, e new and preempted at once.
  now.shares = {share("d", st::preempt), share("a", st::running), share("b", st::preempt),
                share("c", st::evict), share("e", st::preempt)};
  auto ids = [](const std::vector<const msg::share_schedule*>& found) {
    std::vector<std::string> out;
    for (const auto* s : found) out.push_back(s->id);
    return out;
  };
  CHECK(ids(shares_newly_removed(now, &before)) == std::vector<std::string>{"d", "c", "e"});
  // A new job: every share being removed counts.
  CHECK(ids(shares_newly_removed(now, nullptr)) == std::vector<std::string>{"d", "b", "c", "e"});

  // Against the comparison of every share with every other, over random jobs whose versions list their
  // shares in the same order, shuffled, or in part.
  std::mt19937 rng{7};
  for (int round = 0; round < 300; ++round) {
    INFO("round " << round);
    const int n = std::uniform_int_distribution<int>(0, 60)(rng);
    const st statuses[] = {st::new_, st::running, st::preempt, st::evict};
    auto any_status = [&] { return statuses[std::uniform_int_distribution<int>(0, 3)(rng)]; };
    msg::job_schedule was, is;
    for (int k = 0; k < n; ++k) {
      if (std::uniform_int_distribution<int>(0, 9)(rng) > 0)
        was.shares.push_back(share("s" + std::to_string(k), any_status()));
      if (std::uniform_int_distribution<int>(0, 9)(rng) > 0)
        is.shares.push_back(share("s" + std::to_string(k), any_status()));
    }
    if (round % 3 == 1) std::shuffle(is.shares.begin(), is.shares.end(), rng);
    if (round % 3 == 2) std::reverse(was.shares.begin(), was.shares.end());
    std::vector<std::string> expected;
    for (const auto& s : is.shares) {
      if (s.status != st::preempt && s.status != st::evict) continue;
      auto old =
          std::find_if(was.shares.begin(), was.shares.end(), [&](const auto& o) { return o.id == s.id; });
      if (old == was.shares.end() || old->status != s.status) expected.push_back(s.id);
    }
    REQUIRE(ids(shares_newly_removed(is, &was)) == expected);
  }
}
