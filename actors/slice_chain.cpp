#include "actors/slice_chain.hpp"

#include "actors/internal.hpp"

namespace rmbus::actors {

std::pair<core::job_id, core::work_item> to_core_item::operator()(const messages::work_item& w) const {
  auto item = to_core(w);
  auto id = item.id;
  return {std::move(id), std::move(item)};
}

}  // namespace rmbus::actors
