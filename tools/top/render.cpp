#include "tools/top/render.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace rmbus::top {

namespace {

using messages::node_state;

// One '?' per character a terminal could misread: control bytes, and whole UTF-8 sequences (which would
// also be counted wrong for the column widths). The decoders pass only valid UTF-8, so a continuation byte
// always belongs to the lead byte already replaced.
std::string terminal_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80 && c < 0xc0) continue;
    out += (c < 0x20 || c >= 0x7f) ? '?' : ch;
  }
  return out;
}

// A bus string in a column of `width`: made safe, cut with '~' when longer, padded to the width.
std::string text_col(std::string_view s, std::size_t width) {
  auto out = terminal_safe(s);
  if (out.size() > width) {
    out.resize(width > 0 ? width - 1 : 0);
    if (width > 0) out += '~';
  }
  out.resize(width, ' ');
  return out;
}

std::string name_or_dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string num_col(std::uint64_t n, std::size_t width) {
  auto s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// Column headings: text right-aligned over numbers.
std::string right(std::string_view s, std::size_t width) {
  std::string out(s);
  if (out.size() < width) out.insert(0, width - out.size(), ' ');
  return out;
}

std::string join(std::initializer_list<std::string> cols) {
  std::string line;
  for (const auto& c : cols) {
    if (!line.empty()) line += ' ';
    line += c;
  }
  return line;
}

// `text` in lines of at most `width` characters: the first starts after `first_used` characters already on
// its line, the others after `indent` spaces; breaks at a space where there is one, so a long reason is
// wrapped whole instead of cut at the terminal's edge.
std::vector<std::string> wrap(const std::string& text, std::size_t first_used, std::size_t width,
                              std::size_t indent) {
  std::vector<std::string> out;
  std::string_view rest = text;
  std::size_t room = width > first_used ? width - first_used : 0;
  bool first = true;
  while (!rest.empty()) {
    if (room < 8 && !first) room = 8;  // a very narrow screen still shows something per line
    if (room == 0) {                   // nothing fits after the columns: everything goes below
      out.emplace_back();
      first = false;
      room = width > indent ? width - indent : 8;
      continue;
    }
    std::size_t take = std::min(rest.size(), room);
    if (take < rest.size()) {
      const auto space = rest.substr(0, take + 1).rfind(' ');
      if (space != std::string_view::npos && space > 0) take = space;
    }
    out.push_back((first ? std::string{} : std::string(indent, ' ')) + std::string{rest.substr(0, take)});
    rest.remove_prefix(take);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    first = false;
    room = width > indent ? width - indent : 8;
  }
  return out;
}

struct section {
  std::vector<std::string> head;  // a blank line and the title: shown together or not at all
  std::vector<std::string> rows;
  std::size_t min_rows = 4;  // rows it gets before later sections get any
  bool is_jobs = false;      // scrolls, and says which rows are shown
  bool wrapped = false;      // some job took more than one row (a wrapped note)
};

// ---- header

std::vector<std::string> header(const monitor_model& m, const render_options& o) {
  // Most telling first, so a narrow terminal cuts only where the data comes from.
  std::string line = "rmbus-top";
  // The RM's word on why it runs no rounds: an idle RM is not a silent one.
  const auto why = m.not_scheduling(o.now_ms);
  if (why) {
    line += m.stale(o.now_ms) ? "  STALE: the RM's last word came " +
                                    format_age(o.now_ms - m.not_scheduling_at_ms()) + " ago"
                              : "  NOT SCHEDULING";
  }
  if (const auto& s = m.state()) {
    line += "  cycle " + std::to_string(s->cycle);
    line += "  rm.state " + format_age(o.now_ms - m.state_at_ms()) + " ago";
    if (!why && m.stale(o.now_ms)) line += "  STALE: rounds came every " + format_age(*m.round_interval());
    line += "  jobs " + std::to_string(s->jobs.size());
    // Said only when there are some, so a cluster without reclaim grace reads as it always did.
    if (const auto n = m.reclaiming(); n > 0) line += "  reclaiming " + std::to_string(n);
    const auto refused = std::count_if(s->jobs.begin(), s->jobs.end(), [](const auto& j) {
      return j.status == messages::job_status::refused;
    });
    if (refused > 0) line += "  REFUSED " + std::to_string(refused);
  } else {
    line += "  no rm.state yet";
  }
  if (const auto& n = m.nodes()) line += "  nodes " + std::to_string(n->nodes.size());
  if (!o.endpoint.empty()) line += "  " + terminal_safe(o.endpoint);
  if (m.state() && !m.state_src().empty()) {
    // With HA the sender is the active RM: its instance (src without the ":publisher") and its epoch.
    const auto& src = m.state_src();
    if (const auto epoch = m.state_epoch())
      line += "  active " + terminal_safe(src.substr(0, src.find(':'))) + " epoch " + std::to_string(*epoch);
    else
      line += "  from " + terminal_safe(src);
    if (m.stale_states() > 0) line += " (" + std::to_string(m.stale_states()) + " stale ignored)";
  }

  const auto b = m.bus();
  std::string bus = "bus: " + std::to_string(b.received) + " messages, " + std::to_string(b.gaps) +
                    " gaps (" + std::to_string(b.missing) + " missing), " + std::to_string(b.restarts) +
                    " publisher restarts, " + std::to_string(b.bad_messages) + " bad messages";
  std::string topics = "topics:";
  if (b.by_topic.empty()) topics += " none yet";
  bool first = true;
  for (const auto& [topic, n] : b.by_topic) {
    topics += (first ? " " : ", ") + terminal_safe(topic) + " " + std::to_string(n);
    first = false;
  }
  std::vector<std::string> lines{line};
  if (why)
    for (auto& l : wrap(terminal_safe(messages::describe(*why)), 12, o.width, 12))
      lines.push_back((lines.size() == 1 ? "scheduling  " : "") + l);
  lines.push_back(bus);
  lines.push_back(topics);
  return lines;
}

// ---- sections

section pools_section(const monitor_model& m) {
  section s;
  s.min_rows = 8;
  // Quanta and free quanta come first after the counts of nodes: on a narrow terminal they stay in view.
  s.head = {"", join({text_col("NODEPOOL", 20), right("nodes", 6), right("up", 5), right("quanta", 8),
                      right("free", 8), right("missing", 7), right("down", 5), right("off", 5),
                      right("quiesced", 8), right("blacklisted", 11)})};
  if (!m.nodes()) {
    s.rows.emplace_back("  (waiting for rm.nodes)");
    return s;
  }
  for (const auto& p : m.pools())
    s.rows.push_back(
        join({text_col(p.pool, 20), num_col(p.nodes, 6), num_col(p.count(node_state::up), 5),
              num_col(p.quanta, 8), num_col(p.free_quanta, 8), num_col(p.count(node_state::missing), 7),
              num_col(p.count(node_state::down), 5), num_col(p.count(node_state::varied_off), 5),
              num_col(p.count(node_state::quiesced), 8), num_col(p.count(node_state::blacklisted), 11)}));
  if (s.rows.empty()) s.rows.emplace_back("  (no nodes)");
  return s;
}

std::string user_line(const std::string& name, const user_summary& u) {
  auto line = join({text_col(name, 20), num_col(u.jobs, 5), num_col(u.active, 6), num_col(u.quanta, 7),
                    num_col(u.given, 6), num_col(u.demand, 6), num_col(u.fair_share, 6)});
  if (u.below_fair_share()) line += "  below fair share";
  else if (u.capped_jobs > 0)
    line += "  capped by design";
  return line;
}

section classes_section(const monitor_model& m) {
  section s;
  s.head = {"", join({text_col("CLASS / USER", 20), right("jobs", 5), right("active", 6), right("quanta", 7),
                      right("given", 6), right("demand", 6), right("fair", 6)})};
  for (const auto& c : m.classes()) {
    s.rows.push_back(user_line(name_or_dash(c.class_name), c.total));
    // Users in no group directly under the class, then each group (named as one, so it is never taken for a
    // user of the same name) with its users one step further in.
    for (const auto& u : c.users) s.rows.push_back(user_line("  " + text_col(name_or_dash(u.user), 18), u));
    for (const auto& g : c.groups) {
      s.rows.push_back(user_line("  group " + text_col(g.group, 12), g.total));
      for (const auto& u : g.users)
        s.rows.push_back(user_line("    " + text_col(name_or_dash(u.user), 16), u));
    }
  }
  if (s.rows.empty()) s.rows.emplace_back("  (no jobs)");
  return s;
}

std::string losses_note(const job_losses& l, millis now_ms) {
  if (l.preempted == 0 && l.evicted == 0) return {};
  std::string note;
  if (l.preempted > 0) note += "preempted " + std::to_string(l.preempted);
  if (l.evicted > 0) note += std::string{note.empty() ? "" : ", "} + "evicted " + std::to_string(l.evicted);
  return note + ", last " + format_age(now_ms - l.last_at_ms) + " ago";
}

// "reclaim 2 in 1.5s": processes the RM preempts at the soonest deadline unless the need goes away; "due"
// once that time has passed (the RM acts on it in its next round).
std::string reclaim_note(const job_row& j, millis now_ms) {
  if (j.reclaiming == 0) return {};
  std::string note = "reclaim " + std::to_string(j.reclaiming);
  if (!j.reclaim_at_ms) return note;
  const millis left = *j.reclaim_at_ms - now_ms;
  return note + (left > 0 ? " in " + format_age(left) : " due");
}

section jobs_section(const monitor_model& m, const render_options& o) {
  section s;
  s.min_rows = 6;
  s.is_jobs = true;
  s.head = {"", join({text_col("JOB", 20), text_col("USER", 10), text_col("CLASS", 10), text_col("STATUS", 9),
                      right("MB/proc", 7), right("active", 6), right("leaving", 7), right("given", 5),
                      right("demand", 6)}) +
                    "  NOTE"};
  for (const auto& j : m.jobs()) {
    if (j.status == messages::job_status::refused) continue;  // listed apart, under REFUSED
    // The note: why it waits (pending or refused), what it is about to lose, and what it lost lately; bounded
    // (a few lines' worth) so that one enormous reason off the bus costs nothing, and wrapped below the row
    // when it does not fit, so its end is never lost at the terminal's edge.
    std::string note = j.reason.substr(0, 4 * o.width);
    // Below its fair share on purpose: say which cap, so it is not read as starvation.
    if (!j.capped_by.empty())
      note +=
          std::string{note.empty() ? "" : "; "} + "capped by " + j.capped_by.substr(0, 32) + " (by design)";
    for (const auto& part : {reclaim_note(j, o.now_ms), losses_note(j.losses, o.now_ms)})
      if (!part.empty()) note += (note.empty() ? "" : "; ") + part;
    auto line = join({text_col(j.id, 20), text_col(name_or_dash(j.user), 10),
                      text_col(name_or_dash(j.class_name), 10), text_col(messages::to_string(j.status), 9),
                      num_col(j.memory_mb, 7), num_col(j.active, 6), num_col(j.leaving, 7),
                      num_col(j.given, 5), num_col(j.demand, 6)});
    if (note.empty()) {
      s.rows.push_back(std::move(line));
      continue;
    }
    line += "  ";
    auto parts = wrap(terminal_safe(note), line.size(), o.width, 6);
    s.rows.push_back(line + parts.front());
    for (std::size_t i = 1; i < parts.size(); ++i) s.rows.push_back(std::move(parts[i]));
    s.wrapped = s.wrapped || parts.size() > 1;
  }
  if (s.rows.empty()) s.rows.emplace_back("  (no jobs)");
  return s;
}

// Work the RM refused, with why: it never runs as submitted, so it is listed apart from the jobs that wait.
section refused_section(const monitor_model& m, const render_options& o) {
  section s;
  s.min_rows = 3;
  std::vector<std::string> rows;
  for (const auto& j : m.jobs()) {
    if (j.status != messages::job_status::refused) continue;
    const auto lead = "  " + terminal_safe(j.id) + " (user " + terminal_safe(name_or_dash(j.user)) + "): ";
    auto parts = wrap(terminal_safe(j.reason.substr(0, 4 * o.width)), lead.size(), o.width, 6);
    rows.push_back(lead + (parts.empty() ? std::string{} : parts.front()));
    for (std::size_t i = 1; i < parts.size(); ++i) rows.push_back(std::move(parts[i]));
  }
  if (rows.empty()) return s;
  s.head = {"", "REFUSED: work the RM will not run as submitted, and why"};
  s.rows = std::move(rows);
  return s;
}

section events_section(const monitor_model& m, const render_options& o) {
  section s;
  std::string title = "RECENT EVENTS, newest first";
  if (!m.events_by_kind().empty()) {
    title += " (rm.events seen:";
    bool first = true;
    for (const auto& [kind, n] : m.events_by_kind()) {
      title += (first ? " " : ", ") + terminal_safe(kind) + " " + std::to_string(n);
      first = false;
    }
    title += ")";
  }
  s.head = {"", title};
  const std::size_t limit = o.height == 0 ? o.max_events : m.events().size();
  for (const auto& e : m.events()) {
    if (s.rows.size() == limit) break;
    s.rows.push_back(right(format_age(o.now_ms - e.at_ms) + " ago", 12) + "  " + text_col(e.kind, 13) + "  " +
                     terminal_safe(e.text.substr(0, o.width)));
  }
  if (s.rows.empty()) s.rows.emplace_back("  (none yet)");
  return s;
}

section cycles_section(const monitor_model& m) {
  section s;
  s.head = {"", join({text_col("LAST CYCLE", 16), right("cycle", 6), right("jobs", 5), right("nodes", 5),
                      right("given", 5), right("preempted", 9), right("evicted", 7), right("how_much_us", 11),
                      right("what_of_us", 10), right("preempt_us", 10), right("defrag_us", 9),
                      right("total_us", 8)})};
  for (const auto& [pool, pc] : m.cycles()) {
    const auto& c = pc.cycle;
    auto line = join({text_col(pool, 16), num_col(c.cycle, 6), num_col(c.jobs, 5), num_col(c.nodes, 5),
                      num_col(c.given, 5), num_col(c.preempted, 9), num_col(c.evicted, 7),
                      num_col(c.how_much_us, 11), num_col(c.what_of_us, 10), num_col(c.preempt_us, 10),
                      num_col(c.defrag_us, 9), num_col(c.total_us, 8)});
    // A pool that did not answer the last round (round_timeout) keeps an older rm.cycle: say so.
    if (m.state() && c.cycle < m.state()->cycle) line += "  behind";
    s.rows.push_back(std::move(line));
  }
  if (s.rows.empty()) s.rows.emplace_back("  (no rm.cycle yet)");
  return s;
}

// ---- layout

void lay_out(std::vector<section>& sections, const render_options& o, screen& out) {
  const bool limited = o.height > 0;
  std::size_t budget = limited ? o.height - std::min(o.height, out.lines.size()) : 0;
  std::vector<bool> shown(sections.size(), !limited);
  std::vector<std::size_t> granted(sections.size(), 0);
  if (limited) {
    // First each section's heading and first rows, by importance (a section that cannot have them all takes
    // what is left, so a less important one never shows in its place); then the rest, by importance.
    for (std::size_t i = 0; i < sections.size(); ++i) {
      const auto& s = sections[i];
      const bool any_row = !s.rows.empty();
      if (s.head.size() + (any_row ? 1 : 0) > budget) continue;
      const auto rows = std::min({s.rows.size(), s.min_rows, budget - s.head.size()});
      shown[i] = true;
      granted[i] = rows;
      budget -= s.head.size() + rows;
    }
    for (std::size_t i = 0; i < sections.size(); ++i) {
      if (!shown[i]) continue;
      const auto more = std::min(sections[i].rows.size() - granted[i], budget);
      granted[i] += more;
      budget -= more;
    }
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (!shown[i]) continue;
    auto& s = sections[i];
    for (auto& h : s.head) out.lines.push_back(std::move(h));
    const std::size_t total = s.rows.size();
    const bool whole = !limited || granted[i] == total;
    // Cut short, the last line granted says what is not shown.
    const std::size_t visible = whole ? total : granted[i] - (granted[i] > 0 ? 1 : 0);
    std::size_t first = 0;
    if (s.is_jobs) {
      first = whole ? 0 : std::min(o.jobs_offset, total - visible);
      out.jobs_first = first;
      out.jobs_shown = visible;
    }
    for (std::size_t r = first; r < first + visible; ++r) out.lines.push_back(std::move(s.rows[r]));
    if (whole || granted[i] == 0) continue;
    if (s.is_jobs && visible > 0)
      out.lines.push_back("  -- " + std::string{s.wrapped ? "job lines " : "jobs "} +
                          std::to_string(first + 1) + "-" + std::to_string(first + visible) + " of " +
                          std::to_string(total) + " (Up/Down, PgUp/PgDn, Home/End scroll) --");
    else if (s.is_jobs)
      out.lines.push_back("  -- " + std::to_string(total) + " jobs: make the window taller to see them --");
    else
      out.lines.push_back("  ... " + std::to_string(total - visible) + " more");
  }
}

}  // namespace

std::string format_age(millis ms) {
  ms = std::max<millis>(0, ms);
  char buf[48];
  if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%lld.%llds", static_cast<long long>(ms / 1000),
                  static_cast<long long>(ms % 1000 / 100));
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(ms / 60'000),
                  static_cast<long long>(ms % 60'000 / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>(ms % 3'600'000 / 60'000));
  }
  return buf;
}

std::size_t scroll_jobs(std::size_t offset, scroll_step step, std::size_t page, std::size_t total) {
  if (total == 0) return 0;
  page = std::max<std::size_t>(1, page);
  const std::size_t last = total - 1;
  offset = std::min(offset, last);
  switch (step) {
    case scroll_step::line_up:
      return offset > 0 ? offset - 1 : 0;
    case scroll_step::line_down:
      return std::min(offset + 1, last);
    case scroll_step::page_up:
      return offset > page ? offset - page : 0;
    case scroll_step::page_down:
      return std::min(offset + page, last);
    case scroll_step::first:
      return 0;
    case scroll_step::last:
      return last;
  }
  return offset;
}

screen render(const monitor_model& m, const render_options& o) {
  screen out;
  out.lines = header(m, o);
  if (o.height > 0 && out.lines.size() > o.height) out.lines.resize(o.height);
  std::vector<section> sections;
  if (!m.state()) {
    section waiting;
    waiting.head = {"",
                    m.not_scheduling(o.now_ms)
                        ? std::string{"no rm.state: the RM runs no rounds (why: the scheduling line above)"}
                        : "waiting for the RM's first rm.state" +
                              (o.endpoint.empty() ? std::string{} : " on " + terminal_safe(o.endpoint))};
    waiting.min_rows = 0;
    sections.push_back(std::move(waiting));
  }
  sections.push_back(pools_section(m));
  if (m.state()) {
    sections.push_back(classes_section(m));
    if (auto refused = refused_section(m, o); !refused.rows.empty()) sections.push_back(std::move(refused));
    sections.push_back(jobs_section(m, o));
    // Rows, not jobs: a wrapped note takes more than one, and scrolling goes by rows.
    out.jobs_total = sections.back().rows.size();
  }
  sections.push_back(events_section(m, o));
  sections.push_back(cycles_section(m));
  lay_out(sections, o, out);
  for (auto& line : out.lines) {
    if (line.size() > o.width) line.resize(o.width);
    while (!line.empty() && line.back() == ' ') line.pop_back();
  }
  return out;
}

}  // namespace rmbus::top
