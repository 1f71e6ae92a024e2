#include "core/cluster_model.hpp"

#include <stdexcept>

namespace rmbus::core {

bool cluster_model::in_subtree(int p, int ancestor) const {
  while (p >= 0) {
    if (p == ancestor) return true;
    p = pools[static_cast<std::size_t>(p)].parent;
  }
  return false;
}

int cluster_model::current(const job_rec& j) const {
  int n = 0;
  for (int s : j.shares)
    if (!shares[static_cast<std::size_t>(s)].removing() && !shares[static_cast<std::size_t>(s)].blacklisted) ++n;
  return n;
}

int cluster_model::confirmed(const job_rec& j) const {
  int n = 0;
  for (int s : j.shares) {
    const auto& sh = shares[static_cast<std::size_t>(s)];
    if (sh.status == share_status::running && !sh.blacklisted) ++n;
  }
  return n;
}

std::pair<share_id, std::uint64_t> cluster_model::new_share_id() {
  const std::uint64_t seq = next_seq++;
  return {share_id(share_prefix + "." + std::to_string(seq)), seq};
}

int cluster_model::add_share(int job, int machine, int order, share_id id, std::uint64_t seq,
                             share_status status) {
  int slot;
  if (!free_share_slots.empty()) {
    slot = free_share_slots.back();
    free_share_slots.pop_back();
  } else {
    slot = static_cast<int>(shares.size());
    shares.emplace_back();
  }
  auto& s = shares[static_cast<std::size_t>(slot)];
  s = share_rec{};
  s.live = true;
  s.id = std::move(id);
  s.seq = seq;
  s.job = job;
  s.machine = machine;
  s.order = order;
  s.status = status;
  auto& j = jobs[static_cast<std::size_t>(job)];
  const auto* rc = class_of(j);
  s.fixed = rc != nullptr && rc->policy != policy::fair_share;
  j.shares.push_back(slot);
  auto& m = machines[static_cast<std::size_t>(machine)];
  m.shares.push_back(slot);
  m.used += order;
  if (s.fixed) m.nonpreemptable_used += order;
  share_index[s.id] = slot;
  return slot;
}

namespace {
void erase_value(std::vector<int>& v, int x) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == x) {
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}
}  // namespace

void cluster_model::remove_share(int slot) {
  auto& s = shares[static_cast<std::size_t>(slot)];
  if (!s.live) return;
  auto& m = machines[static_cast<std::size_t>(s.machine)];
  m.used -= s.order;
  if (s.fixed) m.nonpreemptable_used -= s.order;
  if (s.blacklisted) --m.blacklisted_shares;
  erase_value(m.shares, slot);
  erase_value(jobs[static_cast<std::size_t>(s.job)].shares, slot);
  share_index.erase(s.id);
  s = share_rec{};
  free_share_slots.push_back(slot);
}

void cluster_model::transfer_share(int slot, int new_job) {
  auto& s = shares[static_cast<std::size_t>(slot)];
  erase_value(jobs[static_cast<std::size_t>(s.job)].shares, slot);
  s.job = new_job;
  jobs[static_cast<std::size_t>(new_job)].shares.push_back(slot);
}

void cluster_model::mark_removing(int slot, share_status status) {
  auto& s = shares[static_cast<std::size_t>(slot)];
  if (!s.live || s.removing()) return;
  s.status = status;
  if (status == share_status::preempt) ++round_preempted;
  if (status == share_status::evict) ++round_evicted;
}

}  // namespace rmbus::core
