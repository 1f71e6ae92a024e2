#include "actors/plan_tables.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace rmbus::actors {

plan_verdict plan_tables::receive(const messages::pool_plan& p) {
  auto& c = chains_[p.pool];
  if (p.full()) {
    c = {p.generation, p.plan_seq, true};
    return {};
  }
  if (!c.in_step) return {false, "no full plan since the last gap or since start"};
  if (p.generation != c.generation || p.base_plan_seq != c.seq) {
    c.in_step = false;
    if (p.generation != c.generation)
      return {false, "a change from generation " + std::to_string(p.generation) + ", the last full plan came from " +
                         std::to_string(c.generation)};
    return {false, "a change on plan " + std::to_string(p.base_plan_seq) + ", the last plan taken is " +
                       std::to_string(c.seq)};
  }
  c.seq = p.plan_seq;
  return {};
}

void plan_tables::break_chain(const std::string& pool) { chains_[pool].in_step = false; }

bool plan_tables::in_step(const std::string& pool) const {
  auto it = chains_.find(pool);
  return it != chains_.end() && it->second.in_step;
}

namespace {

// Whether counting share `a` out and share `b` in leaves every holding as it was: the same quanta on the same
// node, both occupying or neither, both starting or neither.
bool same_holding(const messages::share_schedule& a, const messages::share_schedule& b) {
  const bool a_starts = a.status == messages::share_status::new_;
  const bool b_starts = b.status == messages::share_status::new_;
  return a.quanta == b.quanta && occupies(a.status) == occupies(b.status) && a_starts == b_starts &&
         a.node == b.node;
}

}  // namespace

void plan_tables::count(const messages::job_schedule& j, int sign) {
  count(j.shares, 0, j.shares.size(), sign);
}

void plan_tables::count_change(const messages::job_schedule& before, const messages::job_schedule& now) {
  // A changed job of thousands of shares usually changed a few: one more at the end, one status. The shares
  // that hold the same at the same place from either end are skipped; the middles are counted out and in.
  const auto& a = before.shares;
  const auto& b = now.shares;
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && same_holding(a[head], b[head])) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         same_holding(a[a.size() - 1 - tail], b[b.size() - 1 - tail]))
    ++tail;
  count(a, head, a.size() - tail, -1);
  count(b, head, b.size() - tail, +1);
}

void plan_tables::count(const std::vector<messages::share_schedule>& shares, std::size_t from, std::size_t to,
                        int sign) {
  for (std::size_t k = from; k < to; ++k) {
    const auto& s = shares[k];
    if (!occupies(s.status)) continue;
    const std::uint64_t starts = s.status == messages::share_status::new_ ? 1 : 0;
    if (sign > 0) {
      auto& entry = *holdings_.try_emplace(s.node).first;
      auto& h = entry.second;
      h.quanta += s.quanta;
      h.starts += starts;
      if (!h.raised) {
        h.raised = true;
        raised_.push_back(&entry);
      }
    } else {
      auto it = holdings_.find(s.node);
      if (it == holdings_.end()) continue;
      auto& h = it->second;
      h.quanta -= std::min(h.quanta, s.quanta);
      h.starts -= std::min(h.starts, starts);
      if (h.quanta == 0 && h.starts == 0 && !h.raised) holdings_.erase(it);
    }
  }
}

plan_tables::applied_job& plan_tables::remember(const std::string& pool, const std::string& id,
                                                const job_table& table) {
  auto it = table.find(id);
  return remember(pool, id,
                  it == table.end() ? nullptr : std::make_unique<messages::job_schedule>(it->second));
}

plan_tables::applied_job& plan_tables::remember(const std::string& pool, const std::string& id,
                                                version_before old) {
  // Changed twice since the commit: the first version before counts.
  return before_[pool].try_emplace(id, applied_job{std::move(old), nullptr}).first->second;
}

void plan_tables::apply(const messages::pool_plan& p) { apply_plan(p); }

void plan_tables::apply(messages::pool_plan&& p) { apply_plan(std::move(p)); }

template <class Plan>
void plan_tables::apply_plan(Plan&& p) {
  // A job of the plan as the table takes it: moved out of a plan given up, else copied.
  const auto taken = [](auto& j) -> decltype(auto) {
    if constexpr (std::is_const_v<std::remove_reference_t<Plan>>)
      return static_cast<const messages::job_schedule&>(j);
    else
      return std::move(j);
  };
  auto& table = tables_[p.pool];
  if (p.full()) {
    // Every job before is gone or replaced (its version before moved, not copied); the plan lists every job
    // now, the new ones remembered as new.
    for (auto& [id, j] : table) {
      count(j, -1);
      remember(p.pool, id, std::make_unique<messages::job_schedule>(std::move(j))).now = nullptr;
    }
    table.clear();
    for (auto& j : p.jobs) {
      count(j, +1);
      std::string id = j.id;
      const auto in_table = table.insert_or_assign(table.end(), std::move(id), taken(j));
      remember(p.pool, in_table->first, nullptr).now = &in_table->second;
    }
    return;
  }
  for (const auto& id : p.removed_jobs) {
    auto it = table.find(id);
    if (it == table.end()) continue;
    auto& applied = remember(p.pool, id, table);
    count(it->second, -1);
    table.erase(it);
    applied.now = nullptr;
  }
  for (auto& j : p.jobs) {
    auto it = table.find(j.id);
    if (it != table.end()) {
      count_change(it->second, j);
      // Replaced next: its version before is moved, not copied.
      auto& applied = remember(p.pool, j.id, std::make_unique<messages::job_schedule>(std::move(it->second)));
      it->second = taken(j);
      applied.now = &it->second;
    } else {
      count(j, +1);
      std::string id = j.id;
      const auto in_table = table.emplace(std::move(id), taken(j)).first;
      remember(p.pool, in_table->first, nullptr).now = &in_table->second;
    }
  }
}

void plan_tables::rollback(const std::string& pool) {
  auto before = before_.find(pool);
  if (before == before_.end()) return;
  auto& table = tables_[pool];
  for (auto& [id, applied] : before->second) {
    if (auto it = table.find(id); it != table.end()) {
      count(it->second, -1);
      table.erase(it);
    }
    if (applied.before) {
      count(*applied.before, +1);
      table.emplace(id, std::move(*applied.before));
    }
  }
  before_.erase(before);
}

void plan_tables::commit() {
  before_.clear();
  for (auto* entry : raised_) {
    entry->second.raised = false;
    if (entry->second.quanta == 0 && entry->second.starts == 0) holdings_.erase(holdings_.find(entry->first));
  }
  raised_.clear();
}

void plan_tables::drop(const std::string& pool) {
  if (auto it = tables_.find(pool); it != tables_.end()) {
    for (const auto& [id, j] : it->second) count(j, -1);
    tables_.erase(it);
  }
  before_.erase(pool);
  chains_.erase(pool);
}

void plan_tables::clear() {
  chains_.clear();
  tables_.clear();
  before_.clear();
  holdings_.clear();
  raised_.clear();
}

const plan_tables::job_table* plan_tables::table(const std::string& pool) const {
  auto it = tables_.find(pool);
  return it == tables_.end() ? nullptr : &it->second;
}

std::uint64_t plan_tables::held(const std::string& node) const {
  auto it = holdings_.find(node);
  return it == holdings_.end() ? 0 : it->second.quanta;
}

std::uint64_t plan_tables::starting(const std::string& node) const {
  auto it = holdings_.find(node);
  return it == holdings_.end() ? 0 : it->second.starts;
}

std::vector<overbooked_node> plan_tables::overbooked(const node_quanta_lookup& quanta_of,
                                                     const std::set<std::string>& also) const {
  std::vector<overbooked_node> out;
  const auto check = [&](const std::string& node, const holding& h) {
    if (h.starts == 0) return;
    const auto order = quanta_of(node);
    if (!order || h.quanta <= *order) return;
    out.push_back({node, *order, h.quanta, {}, {}});
  };
  for (const auto* entry : raised_) check(entry->first, entry->second);
  for (const auto& node : also)
    if (auto h = holdings_.find(node); h != holdings_.end() && !h->second.raised) check(node, h->second);
  if (out.empty()) return out;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });  // for a person
  // Only for the few nodes found: the share ids, for the operator's log line (a walk of every table).
  for (const auto& [pool, table] : tables_)
    for (const auto& [id, j] : table) note_shares_counted(out, j);
  return out;
}

std::vector<std::string> plan_tables::touching(const std::set<std::string>& nodes) const {
  std::vector<std::string> out;
  for (const auto& [pool, jobs] : before_) {
    bool touches = false;
    for (const auto& [id, applied] : jobs) {
      if (applied.now == nullptr) continue;
      for (const auto& s : applied.now->shares) touches = touches || nodes.count(s.node) > 0;
      if (touches) break;
    }
    if (touches) out.push_back(pool);
  }
  return out;
}

}  // namespace rmbus::actors
