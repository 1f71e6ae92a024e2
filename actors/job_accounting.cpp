#include "actors/job_accounting.hpp"

#include <algorithm>

#include "messages/utf8.hpp"

namespace rmbus::actors {

void job_accounting::integrate(tracked_job& j, std::uint64_t now_ms) {
  if (j.since_ms != 0 && now_ms > j.since_ms) j.rec.quanta_ms += j.quanta * (now_ms - j.since_ms);
  if (now_ms > j.since_ms) j.since_ms = now_ms;
}

std::vector<job_record> job_accounting::take_work(const std::vector<const messages::work_item*>& items,
                                                  std::uint64_t now_ms) {
  ++round_;
  std::vector<job_record> done;
  auto finish = [&](tracked_job& j, const char* how) {
    integrate(j, now_ms);
    j.rec.ended = how;
    j.rec.finished_ms = now_ms;
    done.push_back(std::move(j.rec));
  };
  for (const auto* w : items) {
    auto it = jobs_.find(w->id);
    if (w->state == messages::work_state::completed) {
      if (it != jobs_.end()) {
        finish(it->second, "completed");
        jobs_.erase(it);
      }
      continue;
    }
    if (it == jobs_.end()) {
      tracked_job j;
      j.rec.id = w->id;
      j.rec.kind = std::string{messages::to_string(w->kind)};
      j.rec.user = w->user;
      j.rec.class_name = w->class_name;
      j.rec.submitted_ms = w->submitted_ms;
      j.rec.from_start = w->processes.empty();
      it = jobs_.emplace(w->id, std::move(j)).first;
    }
    it->second.round = round_;
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->second.round == round_) {
      ++it;
      continue;
    }
    finish(it->second, "gone");
    it = jobs_.erase(it);
  }
  std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return done;
}

namespace {

// The schedule's jobs in id order: rm.state lists them so (publication sorts them), which is checked, not
// trusted.
std::vector<const messages::job_schedule*> in_id_order(const messages::schedule_listing& jobs) {
  std::vector<const messages::job_schedule*> out;
  out.reserve(jobs.size());
  for (const auto& j : jobs) out.push_back(&j);
  auto by_id = [](const auto* a, const auto* b) { return a->id < b->id; };
  if (!std::is_sorted(out.begin(), out.end(), by_id)) std::stable_sort(out.begin(), out.end(), by_id);
  return out;
}

}  // namespace

void job_accounting::take_schedule(const messages::schedule_listing& jobs, std::uint64_t now_ms) {
  // One merge walk of two id-ordered lists: no per-round index of the schedule.
  const auto listed = in_id_order(jobs);
  auto next = listed.begin();
  for (auto& [id, t] : jobs_) {
    integrate(t, now_ms);
    while (next != listed.end() && std::string_view{(*next)->id} < std::string_view{id}) ++next;
    if (next == listed.end() || (*next)->id != id) {
      t.quanta = 0;
      t.shares.clear();
      continue;
    }
    const auto& s = **next;
    if (!s.class_name.empty() && t.rec.class_name.empty()) t.rec.class_name = s.class_name;  // its default class
    if (!s.group.empty()) t.rec.group = s.group;  // its user's share group in that class, as rm.state names it
    std::uint64_t quanta = 0;
    for (const auto& sh : s.shares) quanta += sh.quanta;
    if (t.rec.started_ms == 0 && !s.shares.empty()) t.rec.started_ms = now_ms;
    t.quanta = quanta;
    // Most rounds list a job's shares exactly as the last one did: nothing to count then.
    const bool unchanged =
        s.shares.size() == t.shares.size() &&
        std::equal(s.shares.begin(), s.shares.end(), t.shares.begin(),
                   [](const messages::share_schedule& now, const listed_share& was) {
                     return now.status == was.status && now.id == was.id;
                   });
    if (unchanged) continue;
    std::map<std::string_view, messages::share_status> before;
    for (const auto& was : t.shares) before.emplace(was.id, was.status);
    std::vector<listed_share> now;
    now.reserve(s.shares.size());
    for (const auto& sh : s.shares) {
      auto was = before.find(sh.id);
      if (was == before.end()) ++t.rec.processes;
      const bool same = was != before.end() && was->second == sh.status;
      if (sh.status == messages::share_status::preempt && !same) ++t.rec.preemptions;
      if (sh.status == messages::share_status::evict && !same) ++t.rec.evictions;
      now.push_back({sh.id, sh.status});
    }
    t.shares = std::move(now);
  }
}

std::string quanta_seconds_text(std::uint64_t quanta_ms) {
  const auto frac = quanta_ms % 1000;
  std::string f = std::to_string(frac);
  return std::to_string(quanta_ms / 1000) + "." + std::string(3 - f.size(), '0') + f;
}

std::string json_string(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto n = messages::utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string to_json_line(const job_record& r) {
  std::string out = "{";
  auto str = [&](const char* key, const std::string& v) {
    if (out.size() > 1) out += ",";
    out += json_string(key) + ":" + json_string(v);
  };
  auto num = [&](const char* key, const std::string& v) {
    if (out.size() > 1) out += ",";
    out += json_string(key) + ":" + v;
  };
  str("id", r.id);
  str("kind", r.kind);
  str("user", r.user);
  str("class", r.class_name);
  str("group", r.group);
  str("ended", r.ended);
  num("quanta_seconds", quanta_seconds_text(r.quanta_ms));
  num("processes", std::to_string(r.processes));
  num("preemptions", std::to_string(r.preemptions));
  num("evictions", std::to_string(r.evictions));
  num("submitted_ms", std::to_string(r.submitted_ms));
  num("started_ms", std::to_string(r.started_ms));
  num("finished_ms", std::to_string(r.finished_ms));
  num("from_start", r.from_start ? "true" : "false");
  return out + "}";
}

messages::rm_event to_event(const job_record& r) {
  return {std::string{messages::event_kinds::job_done},
          {{"job", r.id},
           {"kind", r.kind},
           {"user", r.user},
           {"class", r.class_name},
           {"group", r.group},
           {"ended", r.ended},
           {"quanta_seconds", quanta_seconds_text(r.quanta_ms)},
           {"processes", std::to_string(r.processes)},
           {"preemptions", std::to_string(r.preemptions)},
           {"evictions", std::to_string(r.evictions)},
           {"submitted_ms", std::to_string(r.submitted_ms)},
           {"started_ms", std::to_string(r.started_ms)},
           {"finished_ms", std::to_string(r.finished_ms)},
           {"from_start", r.from_start ? "true" : "false"}}};
}

}  // namespace rmbus::actors
