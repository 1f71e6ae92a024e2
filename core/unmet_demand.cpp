#include "core/unmet_demand.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace rmbus::core {

std::vector<unmet_load> unmet_demand(const cluster_model& m) {
  using key = std::tuple<std::string, int, reason_code>;
  std::map<key, unmet_load> by_key;
  std::map<key, job_id> first;  // the job whose text stands for the entry: the lowest id
  for (const auto& j : m.jobs) {
    if (!j.live || j.refused || j.reason != reason_code::no_machine_of_order) continue;
    const auto* c = m.class_of(j);
    if (c == nullptr) continue;
    const key k{c->name, j.order, j.reason};
    auto& e = by_key[k];
    e.class_name = c->name;
    e.order = j.order;
    e.reason = j.reason;
    ++e.jobs;
    e.processes += std::max<std::int64_t>(1, j.cap.cap);
    auto f = first.find(k);
    if (f == first.end() || j.item.id < f->second) {
      first[k] = j.item.id;
      e.text = j.reason_text;
    }
  }
  std::vector<unmet_load> out;
  out.reserve(by_key.size());
  for (auto& [k, e] : by_key) out.push_back(std::move(e));
  return out;
}

}  // namespace rmbus::core
