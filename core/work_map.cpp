#include "core/work_map.hpp"

#include <map>

namespace rmbus::core {

work_edit diff(const work_map& before, const work_map& after) {
  // Both maps are ordered by id: one merge pass, and every output list comes out sorted.
  work_edit edit;
  auto b = before.begin();
  auto a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      edit.removed.push_back(b->first);
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      edit.added.push_back(a->second);
      ++a;
    } else {
      if (!(b->second == a->second)) edit.changed.push_back(a->second);
      ++a;
      ++b;
    }
  }
  return edit;
}

work_map apply(work_map before, const work_edit& edit) {
  for (const auto& id : edit.removed) before.erase(id);
  for (const auto& item : edit.added) before.insert_or_assign(item.id, item);
  for (const auto& item : edit.changed) before.insert_or_assign(item.id, item);
  return before;
}

namespace {

std::map<share_id, const process_report*> by_share(const work_item& item) {
  std::map<share_id, const process_report*> out;
  for (const auto& p : item.processes) out.insert_or_assign(p.id, &p);  // later duplicate wins
  return out;
}

process_event make_event(const job_id& job, const process_report& p, process_event_kind kind, process_state from) {
  process_event e;
  e.job = job;
  e.share = p.id;
  e.kind = kind;
  e.node = p.node;
  e.from = from;
  e.to = kind == process_event_kind::vanished ? from : p.state;
  e.init_ms = p.init_ms;
  e.run_ms = p.run_ms;
  return e;
}

}  // namespace

std::vector<process_event> process_events(const work_item& before, const work_item& after) {
  std::vector<process_event> out;
  const auto old_procs = by_share(before);
  const auto new_procs = by_share(after);
  auto o = old_procs.begin();
  auto n = new_procs.begin();
  while (o != old_procs.end() || n != new_procs.end()) {
    if (n == new_procs.end() || (o != old_procs.end() && o->first < n->first)) {
      // Gone from the map. One that had already ended was reported then.
      if (o->second->state != process_state::ended) {
        out.push_back(make_event(after.id, *o->second, process_event_kind::vanished, o->second->state));
      }
      ++o;
    } else if (o == old_procs.end() || n->first < o->first) {
      out.push_back(make_event(after.id, *n->second, process_event_kind::appeared, n->second->state));
      ++n;
    } else {
      const process_report& was = *o->second;
      const process_report& now = *n->second;
      if (!(was == now) && was.state != process_state::ended) {
        const auto kind = now.state == process_state::ended ? process_event_kind::ended
                                                            : process_event_kind::state_changed;
        out.push_back(make_event(after.id, now, kind, was.state));
      }
      ++o;
      ++n;
    }
  }
  return out;
}

std::vector<process_event> process_events(const work_map& before, const work_edit& edit) {
  // added and changed are each sorted by id, and an id is never in both (diff's contract; an edit built by
  // hand may break it, then the two lists' events are simply both reported): merge them by job id.
  std::vector<process_event> out;
  auto from_added = [&](const work_item& item) {
    for (const auto& [id, p] : by_share(item)) {
      if (p->state != process_state::ended) {
        out.push_back(make_event(item.id, *p, process_event_kind::appeared, p->state));
      }
    }
  };
  auto from_changed = [&](const work_item& item) {
    const auto it = before.find(item.id);
    if (it == before.end()) {
      from_added(item);
      return;
    }
    auto events = process_events(it->second, item);
    out.insert(out.end(), events.begin(), events.end());
  };
  auto a = edit.added.begin();
  auto c = edit.changed.begin();
  while (a != edit.added.end() || c != edit.changed.end()) {
    if (c == edit.changed.end() || (a != edit.added.end() && a->id < c->id)) {
      from_added(*a++);
    } else {
      from_changed(*c++);
    }
  }
  return out;
}

const char* to_string(process_event_kind kind) {
  switch (kind) {
    case process_event_kind::appeared: return "appeared";
    case process_event_kind::state_changed: return "state_changed";
    case process_event_kind::ended: return "ended";
    case process_event_kind::vanished: return "vanished";
  }
  return "unknown";
}

}  // namespace rmbus::core
