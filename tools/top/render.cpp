#include "tools/top/render.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace rmbus::top {

namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// Names off the bus are cut so that one long name cannot push every column of its line out of view.
std::string cut(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

// Bytes a terminal would misread (control characters) are shown as '?'.
std::string printable(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

std::uint64_t count_status(const messages::job_schedule& j, messages::share_status st) {
  return static_cast<std::uint64_t>(
      std::count_if(j.shares.begin(), j.shares.end(), [st](const auto& s) { return s.status == st; }));
}

void header(const monitor_model& m, const render_options& o, std::vector<std::string>& out) {
  const auto b = m.bus();
  std::string line = "rmbus-top";
  if (m.state()) {
    const double age_s = static_cast<double>(std::max<std::int64_t>(0, o.now_ms - m.state_at_ms())) / 1000.0;
    line += format("  cycle %llu  (rm.state %.1f s ago)  jobs %zu",
                   static_cast<unsigned long long>(m.state()->cycle), age_s, m.state()->jobs.size());
  }
  if (m.nodes()) line += format("  nodes %zu", m.nodes()->nodes.size());
  out.push_back(line);
  out.push_back(format("bus: %llu messages, %llu gaps (%llu missing), %llu publisher restarts, %llu bad messages",
                       static_cast<unsigned long long>(b.received), static_cast<unsigned long long>(b.gaps),
                       static_cast<unsigned long long>(b.missing), static_cast<unsigned long long>(b.restarts),
                       static_cast<unsigned long long>(b.bad_messages)));
}

void pools(const monitor_model& m, std::vector<std::string>& out) {
  out.emplace_back();
  out.push_back(format("%-20s %6s %5s %7s %5s %5s %8s %11s %8s %8s", "NODEPOOL", "nodes", "up", "missing", "down",
                       "off", "quiesced", "blacklisted", "quanta", "free"));
  if (!m.nodes()) {
    out.emplace_back("  (no rm.nodes yet)");
    return;
  }
  using st = messages::node_state;
  for (const auto& p : m.pools()) {
    const auto n = [&](st s) {
      auto it = p.nodes_by_state.find(s);
      return static_cast<unsigned long long>(it == p.nodes_by_state.end() ? 0 : it->second);
    };
    out.push_back(format("%-20s %6llu %5llu %7llu %5llu %5llu %8llu %11llu %8llu %8llu",
                         cut(printable(p.pool), 20).c_str(), static_cast<unsigned long long>(p.nodes), n(st::up),
                         n(st::missing), n(st::down), n(st::varied_off), n(st::quiesced), n(st::blacklisted),
                         static_cast<unsigned long long>(p.quanta), static_cast<unsigned long long>(p.free_quanta)));
  }
}

void users(const monitor_model& m, std::vector<std::string>& out) {
  out.emplace_back();
  out.push_back(format("%-16s %-16s %5s %6s %7s %6s %7s %6s", "CLASS", "USER", "jobs", "procs", "quanta", "given",
                       "demand", "fair"));
  for (const auto& u : m.users())
    out.push_back(format("%-16s %-16s %5llu %6llu %7llu %6llu %7llu %6llu",
                         cut(printable(u.class_name.empty() ? "-" : u.class_name), 16).c_str(),
                         cut(printable(u.user.empty() ? "-" : u.user), 16).c_str(),
                         static_cast<unsigned long long>(u.jobs), static_cast<unsigned long long>(u.processes),
                         static_cast<unsigned long long>(u.quanta), static_cast<unsigned long long>(u.given),
                         static_cast<unsigned long long>(u.demand), static_cast<unsigned long long>(u.fair_share)));
}

void jobs(const monitor_model& m, std::vector<std::string>& out) {
  out.emplace_back();
  out.push_back(format("%-24s %-12s %-12s %-9s %6s %7s %6s  %s", "JOB", "USER", "CLASS", "STATUS", "procs",
                       "preempt", "evict", "REASON"));
  std::vector<const messages::job_schedule*> js;
  for (const auto& j : m.state()->jobs) js.push_back(&j);
  // What needs attention first: refused, then pending, then scheduled; by id within each.
  const auto rank = [](messages::job_status s) {
    return s == messages::job_status::refused ? 0 : s == messages::job_status::pending ? 1 : 2;
  };
  std::sort(js.begin(), js.end(), [&](const auto* a, const auto* b) {
    if (rank(a->status) != rank(b->status)) return rank(a->status) < rank(b->status);
    return a->id < b->id;
  });
  using ss = messages::share_status;
  for (const auto* j : js) {
    const auto held = count_status(*j, ss::running) + count_status(*j, ss::new_);
    out.push_back(format("%-24s %-12s %-12s %-9s %6llu %7llu %6llu  %s", cut(printable(j->id), 24).c_str(),
                         cut(printable(j->user.empty() ? "-" : j->user), 12).c_str(),
                         cut(printable(j->class_name.empty() ? "-" : j->class_name), 12).c_str(),
                         std::string{messages::to_string(j->status)}.c_str(), static_cast<unsigned long long>(held),
                         static_cast<unsigned long long>(count_status(*j, ss::preempt)),
                         static_cast<unsigned long long>(count_status(*j, ss::evict)),
                         printable(j->reason).c_str()));
  }
}

void cycles(const monitor_model& m, std::vector<std::string>& out) {
  if (m.cycles().empty()) return;
  out.emplace_back();
  out.push_back(format("%-20s %7s %6s %6s %6s %9s %7s %9s %8s %8s %7s %8s", "LAST CYCLE", "cycle", "jobs", "nodes",
                       "given", "preempted", "evicted", "how_much", "what_of", "preempt", "defrag", "total us"));
  for (const auto& [pool, c] : m.cycles())
    out.push_back(format("%-20s %7llu %6llu %6llu %6llu %9llu %7llu %9llu %8llu %8llu %7llu %8llu",
                         cut(printable(pool), 20).c_str(), static_cast<unsigned long long>(c.cycle),
                         static_cast<unsigned long long>(c.jobs), static_cast<unsigned long long>(c.nodes),
                         static_cast<unsigned long long>(c.given), static_cast<unsigned long long>(c.preempted),
                         static_cast<unsigned long long>(c.evicted), static_cast<unsigned long long>(c.how_much_us),
                         static_cast<unsigned long long>(c.what_of_us), static_cast<unsigned long long>(c.preempt_us),
                         static_cast<unsigned long long>(c.defrag_us), static_cast<unsigned long long>(c.total_us)));
}

void events(const monitor_model& m, const render_options& o, std::vector<std::string>& out) {
  out.emplace_back();
  out.emplace_back("RECENT EVENTS (newest first)");
  if (m.events().empty()) out.emplace_back("  (none)");
  std::size_t shown = 0;
  for (const auto& e : m.events()) {
    if (shown++ == o.max_events) break;
    const double ago_s = static_cast<double>(std::max<std::int64_t>(0, o.now_ms - e.at_ms)) / 1000.0;
    out.push_back(format("%7.1f s ago  %-12s %s", ago_s, cut(printable(e.kind), 12).c_str(), printable(e.text).c_str()));
  }
}

}  // namespace

std::vector<std::string> render(const monitor_model& m, const render_options& o) {
  std::vector<std::string> out;
  header(m, o, out);
  if (!m.state()) {
    out.emplace_back();
    out.push_back("waiting for the RM's first rm.state" + (o.endpoint.empty() ? std::string{} : " on " + o.endpoint));
  }
  pools(m, out);
  if (m.state()) {
    users(m, out);
    jobs(m, out);
  }
  cycles(m, out);
  events(m, o, out);
  for (auto& line : out) {
    if (line.size() > o.width) line.resize(o.width);
    while (!line.empty() && line.back() == ' ') line.pop_back();
  }
  return out;
}

}  // namespace rmbus::top
