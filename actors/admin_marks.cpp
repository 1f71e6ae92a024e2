#include "actors/admin_marks.hpp"

namespace rmbus::actors {

const char* to_string(admin_mark m) {
  switch (m) {
    case admin_mark::varied_off: return "varied_off";
    case admin_mark::drained: return "drained";
  }
  return "varied_off";
}

std::set<std::string>& admin_marks::set_of(admin_mark mark) {
  return mark == admin_mark::varied_off ? varied_off_ : drained_;
}

const std::set<std::string>& admin_marks::nodes(admin_mark mark) const {
  return mark == admin_mark::varied_off ? varied_off_ : drained_;
}

bool admin_marks::set(admin_mark mark, const std::string& node, bool on) {
  auto& s = set_of(mark);
  if (on) return !s.insert(node).second;
  return s.erase(node) == 0;
}

bool admin_marks::has(admin_mark mark, const std::string& node) const { return nodes(mark).count(node) > 0; }

std::vector<admin_mark> admin_marks::of(const std::string& node) const {
  std::vector<admin_mark> out;
  for (auto m : {admin_mark::varied_off, admin_mark::drained})
    if (has(m, node)) out.push_back(m);
  return out;
}

}  // namespace rmbus::actors
