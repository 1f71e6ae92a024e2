#include "actors/round_listing.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "containers/vector_edits.hpp"
#include "messages/schedule_tally.hpp"

namespace rmbus::actors {

namespace {

messages::job_schedule refused_entry(const messages::refused_work& r) {
  messages::job_schedule s;
  s.id = r.id;
  s.status = messages::job_status::refused;
  s.reason = r.reason;
  s.user = r.user;
  return s;
}

// A job as listed: the table's entry itself, or a refusal's made here. Thousands of jobs change in a busy
// round; each is compared as it was and as it is, and copied only into the changes when it differs.
class entry {
 public:
  entry() = default;
  explicit entry(const messages::job_schedule& in_table) : in_table_(&in_table) {}
  explicit entry(messages::job_schedule&& made) : made_(std::move(made)) {}
  explicit operator bool() const { return in_table_ != nullptr || made_.has_value(); }
  const messages::job_schedule& operator*() const { return made_ ? *made_ : *in_table_; }

 private:
  const messages::job_schedule* in_table_ = nullptr;
  std::optional<messages::job_schedule> made_;
};

// The job as listed now: a refusal, else the later pool (by name) whose table has it.
entry listed_now(const plan_tables& tables, const std::set<std::string>& pools,
                 const std::map<std::string, const messages::refused_work*>& refused, const std::string& id) {
  if (auto r = refused.find(id); r != refused.end()) return entry{refused_entry(*r->second)};
  for (auto p = pools.rbegin(); p != pools.rend(); ++p) {
    const auto* table = tables.table(*p);
    if (table == nullptr) continue;
    if (auto j = table->find(id); j != table->end()) return entry{j->second};
  }
  return {};
}

// The job as the last listing had it: the same rule over the pools and refusals listed then, each table as it
// was before this round's plans (or as it was dropped).
entry listed_then(const plan_tables& tables, const listed_before& before, const std::string& id) {
  if (auto r = before.refused.find(id); r != before.refused.end()) return entry{refused_entry(r->second)};
  for (auto p = before.pools.rbegin(); p != before.pools.rend(); ++p) {
    if (auto d = before.dropped.find(*p); d != before.dropped.end()) {
      if (auto j = d->second.find(id); j != d->second.end()) return entry{j->second};
      continue;
    }
    if (auto a = tables.applied().find(*p); a != tables.applied().end()) {
      if (auto j = a->second.find(id); j != a->second.end()) {
        if (j->second.before) return entry{*j->second.before};
        continue;  // new this round
      }
    }
    const auto* table = tables.table(*p);
    if (table == nullptr) continue;
    if (auto j = table->find(id); j != table->end()) return entry{j->second};
  }
  return {};
}

// listing_changes in the round of one pool listed then and now, without refusals then or now and no table
// dropped (every round of a cluster of one top-level pool): the jobs applied to its table are the only
// candidates, already in id order, each with its versions before and now at hand. None is looked up, where
// the general rule gathers every id into a new tree and makes four lookups for each (a full map's round
// changes some 6,000 jobs at 50,000 nodes).
bool list_one_pool_changes(const plan_tables& tables, const std::set<std::string>& pools,
                           const std::vector<messages::refused_work>& refused, const listed_before& before,
                           messages::rm_schedule_changes& out) {
  if (pools.size() != 1 || before.pools != pools || !refused.empty() || !before.refused.empty() ||
      !before.dropped.empty())
    return false;
  const auto& pool = *pools.begin();
  const auto applied = tables.applied().find(pool);
  if (applied == tables.applied().end()) return true;  // nothing applied: nothing changed
  out.jobs.reserve(applied->second.size());
  for (const auto& [id, job] : applied->second) {
    if (job.now != nullptr && (!job.before || *job.now != *job.before))
      out.jobs.push_back(*job.now);
    else if (job.now == nullptr && job.before)
      out.removed.push_back(id);
  }
  return true;
}

}  // namespace

messages::schedule_listing list_round(const plan_tables& tables, const std::set<std::string>& pools,
                                      const std::vector<messages::refused_work>& refused) {
  std::vector<const plan_tables::job_table*> listed;
  std::size_t n = refused.size();
  for (const auto& pool : pools) {
    const auto* table = tables.table(pool);
    if (table == nullptr) continue;
    listed.push_back(table);
    n += table->size();
  }
  // With room: this listing becomes rm.state, which the next rounds' arrivals are inserted into in place.
  messages::schedule_listing jobs;
  jobs.reserve(containers::with_room_to_grow(n));
  for (const auto* t : listed)
    for (const auto& [id, j] : *t) jobs.push_back(j);
  // One pool and no refusals, the common case: its table is the round, already in id order.
  if (listed.size() <= 1 && refused.empty()) return jobs;
  for (const auto& r : refused) jobs.push_back(refused_entry(r));
  // Each pool's jobs come sorted by id already; one stable sort of the whole keeps the listing in id order,
  // and of a job id in several places the last one (the later pool, a refusal last of all) is kept.
  // The entries' owners are sorted and kept, not the entries.
  auto& owners = jobs.owners();
  std::stable_sort(owners.begin(), owners.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
  messages::schedule_listing unique;
  unique.reserve(containers::with_room_to_grow(jobs.size()));
  for (auto& j : owners) {
    if (!unique.empty() && unique.back().id == j->id)
      unique.owners().back() = std::move(j);
    else
      unique.owners().push_back(std::move(j));
  }
  return unique;
}

messages::rm_schedule_changes listing_changes(const plan_tables& tables, const std::set<std::string>& pools,
                                              const std::vector<messages::refused_work>& refused,
                                              const listed_before& before, std::uint64_t cycle,
                                              std::uint64_t base_cycle) {
  messages::rm_schedule_changes out;
  out.cycle = cycle;
  out.base_cycle = base_cycle;
  if (list_one_pool_changes(tables, pools, refused, before, out)) return out;
  std::map<std::string, const messages::refused_work*> refused_now;
  for (const auto& r : refused) refused_now[r.id] = &r;  // the last of an id named twice, as list_round
  // The ids as pointers to the keys that hold them (none is copied), sorted and without repeats.
  std::vector<const std::string*> candidates;
  for (const auto& [pool, jobs] : tables.applied())
    for (const auto& [id, was] : jobs) candidates.push_back(&id);
  for (const auto& [pool, table] : before.dropped)
    for (const auto& [id, j] : table) candidates.push_back(&id);
  for (const auto& [id, r] : refused_now) candidates.push_back(&id);
  for (const auto& [id, r] : before.refused) candidates.push_back(&id);
  // A pool listed then and not now had its table dropped; one listed now and not then has none but what its
  // first (full) plan applied: both are among the candidates already.
  const auto by_id = [](const std::string* a, const std::string* b) { return *a < *b; };
  std::sort(candidates.begin(), candidates.end(), by_id);
  candidates.erase(std::unique(candidates.begin(), candidates.end(),
                               [](const std::string* a, const std::string* b) { return *a == *b; }),
                   candidates.end());

  // Sized once: on a first round every job is listed, and growing by doubling held up to 1.5 times the
  // listing at once (33 MB at 100,000 jobs).
  out.jobs.reserve(candidates.size());
  for (const auto* id : candidates) {
    const auto now = listed_now(tables, pools, refused_now, *id);
    const auto then = listed_then(tables, before, *id);
    if (now && (!then || *now != *then)) out.jobs.push_back(*now);
    else if (!now && then)
      out.removed.push_back(*id);
  }
  return out;
}

std::vector<const messages::share_schedule*> shares_newly_removed(const messages::job_schedule& now,
                                                                  const messages::job_schedule* before) {
  std::vector<const messages::share_schedule*> out;
  const auto removing = [](messages::share_status s) {
    return s == messages::share_status::preempt || s == messages::share_status::evict;
  };
  if (before == nullptr) {
    for (const auto& s : now.shares)
      if (removing(s.status)) out.push_back(&s);
    return out;
  }
  // The two versions list their shares mostly in the same order: each share is looked for from where the
  // last one was found on, then before it. From the start each time, a job of thousands of shares with
  // hundreds preempted compared nearly every share with every other.
  const auto& then = before->shares;
  auto next = then.begin();
  for (const auto& s : now.shares) {
    if (!removing(s.status)) continue;
    const auto same_id = [&](const messages::share_schedule& o) { return o.id == s.id; };
    auto was = std::find_if(next, then.end(), same_id);
    if (was == then.end()) {
      was = std::find_if(then.begin(), next, same_id);
      if (was == next) was = then.end();  // in neither part
    }
    if (was != then.end()) next = was + 1;
    if (was == then.end() || was->status != s.status) out.push_back(&s);
  }
  return out;
}

namespace {

// The listing's entries (and their encoded bytes) after `added` came and `removed` went, edited where they
// lie in one pass (containers/vector_edits.hpp): each kept entry moves at most once, and only those between
// an arrival and a departure that do not balance. Rebuilding the whole listing (a new array, every entry
// moved, the old freed) took 6 ms at 100,000 jobs for any delta.
void edit_in_place(messages::rm_state& state, std::vector<messages::job_schedule>& added,
                   const std::vector<std::string>& removed, bool keeps_encoded,
                   messages::schedule_tally* tally) {
  auto& jobs = state.jobs;
  auto& encoded = state.encoded_jobs;
  auto position = [&](const std::string& id) {
    return static_cast<std::size_t>(
        std::lower_bound(jobs.begin(), jobs.end(), id,
                         [](const messages::job_schedule& j, const std::string& x) { return j.id < x; }) -
        jobs.begin());
  };
  std::vector<std::string> gone = removed;
  std::sort(gone.begin(), gone.end());
  gone.erase(std::unique(gone.begin(), gone.end()), gone.end());
  // Both in id order, merged: at one position the arrival comes before the departure.
  std::vector<containers::vector_edit> edits;
  std::vector<std::size_t> arrival;  // per edit: its index in `added` (insertions only)
  std::size_t a = 0;
  auto insert = [&] {
    edits.push_back({containers::vector_edit_kind::insert_before, position(added[a].id)});
    arrival.push_back(a++);
  };
  for (const auto& id : gone) {
    const auto at = position(id);
    if (at == jobs.size() || jobs[at].id != id) continue;  // not listed
    if (tally != nullptr) tally->remove(jobs[at]);
    while (a < added.size() && added[a].id < id) insert();
    edits.push_back({containers::vector_edit_kind::erase, at});
    arrival.push_back(0);
  }
  while (a < added.size()) insert();
  std::vector<std::string> added_encoded;
  if (keeps_encoded)
    for (const auto& j : added) added_encoded.push_back(messages::encode_job_entry(j));
  // Room for a little more than this round's arrivals, so that the next rounds insert without moving
  // every entry to a larger array (a copied listing has no room to spare).
  if (jobs.capacity() < jobs.size() + added.size()) {
    const std::size_t room = jobs.size() + added.size() + jobs.size() / 64 + 16;
    jobs.reserve(room);
    if (keeps_encoded) encoded.reserve(room);
  }
  containers::apply_vector_edits(
      jobs, edits, [&](std::size_t k, messages::job_schedule& j) { j = std::move(added[arrival[k]]); });
  if (keeps_encoded)
    containers::apply_vector_edits(
        encoded, edits, [&](std::size_t k, std::string& e) { e = std::move(added_encoded[arrival[k]]); });
}

}  // namespace

void apply_listing_changes(messages::rm_state& state, std::vector<messages::job_schedule> changed,
                           const std::vector<std::string>& removed) {
  auto& jobs = state.jobs;
  auto& encoded = state.encoded_jobs;
  const bool keeps_encoded = encoded.size() == jobs.size();
  // The tally, when kept, follows every entry that goes, comes or is replaced; a reader may still hold the
  // last one, so this round's is a copy (a few entries per class).
  std::shared_ptr<messages::schedule_tally> tally;
  if (state.tally) tally = std::make_shared<messages::schedule_tally>(*state.tally);
  auto by_id = [](const messages::job_schedule& a, const messages::job_schedule& b) { return a.id < b.id; };
  // listing_changes lists them in id order already; a sort would still compare and swap thousands of entries.
  if (!std::is_sorted(changed.begin(), changed.end(), by_id)) std::sort(changed.begin(), changed.end(), by_id);
  std::vector<messages::job_schedule> added;
  for (auto& c : changed) {
    if (tally) tally->add(c);
    auto at = std::lower_bound(jobs.begin(), jobs.end(), c, by_id);
    if (at != jobs.end() && at->id == c.id) {
      if (tally) tally->remove(*at);
      if (keeps_encoded) encoded[static_cast<std::size_t>(at - jobs.begin())] = messages::encode_job_entry(c);
      *at = std::move(c);
    } else {
      added.push_back(std::move(c));
    }
  }
  if (!keeps_encoded) encoded.clear();
  if (!added.empty() || !removed.empty()) edit_in_place(state, added, removed, keeps_encoded, tally.get());
  if (tally) state.tally = std::move(tally);
}

}  // namespace rmbus::actors
