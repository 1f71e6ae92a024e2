#include "tools/sim/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <vector>

namespace rmbus::sim {

namespace {

constexpr double width = 960;
constexpr double left = 70, right = 190;  // the legend sits in the right margin
constexpr double first_y0 = 50, gap = 60, bottom_margin = 50;
constexpr double single_panel_h = 290, pool_panel_h = 200, utilization_h = 150;

// Ten colours that stay distinguishable; users beyond ten reuse them.
constexpr const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

// Utilization lines of several pools: dark, told apart by their dashes.
constexpr const char* pool_dashes[] = {"", "6,3", "2,3", "8,3,2,3", "1,2"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A tick step of 1, 2 or 5 times a power of ten giving about five ticks over [0, max].
double tick_step(double max) {
  if (max <= 0) return 1;
  const double raw = max / 5.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string tick_label(double v) {
  char buf[32];
  if (std::fabs(v - std::round(v)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct panel {
  double y0, y1;  // pixel rows (top, bottom)
  double t_max;   // seconds
  double v_max;
  double x(double t) const { return left + (width - left - right) * (t_max > 0 ? t / t_max : 0); }
  double y(double v) const { return y1 - (y1 - y0) * (v_max > 0 ? std::clamp(v / v_max, 0.0, 1.0) : 0); }
};

void axes(std::ostringstream& o, const panel& p, const std::string& y_title) {
  o << "<rect x='" << num(left) << "' y='" << num(p.y0) << "' width='" << num(width - left - right)
    << "' height='" << num(p.y1 - p.y0) << "' fill='none' stroke='#444'/>\n";
  const double vs = tick_step(p.v_max);
  for (double v = 0; v <= p.v_max + 1e-9; v += vs) {
    o << "<line x1='" << num(left - 4) << "' y1='" << num(p.y(v)) << "' x2='" << num(width - right)
      << "' y2='" << num(p.y(v)) << "' stroke='#ddd'/>\n";
    o << "<text x='" << num(left - 8) << "' y='" << num(p.y(v) + 4) << "' text-anchor='end'>" << tick_label(v)
      << "</text>\n";
  }
  const double ts = tick_step(p.t_max);
  for (double t = 0; t <= p.t_max + 1e-9; t += ts)
    o << "<text x='" << num(p.x(t)) << "' y='" << num(p.y1 + 16) << "' text-anchor='middle'>" << tick_label(t)
      << "</text>\n";
  o << "<text x='18' y='" << num((p.y0 + p.y1) / 2) << "' transform='rotate(-90 18 " << num((p.y0 + p.y1) / 2)
    << ")' text-anchor='middle'>" << xml_escape(y_title) << "</text>\n";
}

// A step line: each value holds until the next sample.
void step_line(std::ostringstream& o, const panel& p, const std::vector<sample>& s,
               const std::function<double(const sample&)>& value, const std::string& style) {
  if (s.empty()) return;
  o << "<polyline fill='none' " << style << " points='";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double t = static_cast<double>(s[i].t_ms) / 1000.0;
    if (i > 0) o << num(p.x(t)) << "," << num(p.y(value(s[i - 1]))) << " ";
    o << num(p.x(t)) << "," << num(p.y(value(s[i]))) << " ";
  }
  o << "'/>\n";
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string render_svg(const recorder& rec, const std::string& title) {
  const auto& s = rec.samples();
  double t_max = s.empty() ? 1 : std::max(1.0, static_cast<double>(s.back().t_ms) / 1000.0);
  std::vector<std::string> pools;
  for (const auto& x : s)
    for (const auto& [name, _] : x.pools)
      if (std::find(pools.begin(), pools.end(), name) == pools.end()) pools.push_back(name);
  std::sort(pools.begin(), pools.end());
  const bool per_pool = pools.size() > 1;

  // One allocation panel: the whole cluster, or one per pool (a pool's quanta are not another's).
  struct allocation {
    std::string pool;  // empty: the whole cluster
    panel area;
  };
  std::vector<allocation> allocations;
  const double panel_h = per_pool ? pool_panel_h : single_panel_h;
  double y = first_y0;
  for (std::size_t k = 0; k < (per_pool ? pools.size() : 1); ++k) {
    const std::string pool = per_pool ? pools[k] : std::string();
    double q_max = 1;
    for (const auto& x : s) {
      const pool_sample* p = nullptr;
      if (per_pool) {
        auto it = x.pools.find(pool);
        if (it == x.pools.end()) continue;
        p = &it->second;
      }
      q_max = std::max(q_max, static_cast<double>(p ? p->total_quanta : x.total_quanta));
      for (const auto& u : p ? p->users : x.users)
        q_max = std::max({q_max, static_cast<double>(u.held_quanta), u.fair_quanta});
    }
    allocations.push_back({pool, panel{y, y + panel_h, t_max, q_max * 1.05}});
    y += panel_h + gap;
  }
  const panel bottom{y, y + utilization_h, t_max, 100};
  const double height = bottom.y1 + bottom_margin;

  std::ostringstream o;
  o << "<?xml version='1.0' encoding='UTF-8'?>\n";
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << num(width) << "' height='" << num(height)
    << "' viewBox='0 0 " << num(width) << " " << num(height)
    << "' font-family='sans-serif' font-size='12'>\n";
  o << "<rect width='100%' height='100%' fill='white'/>\n";
  o << "<text x='" << num(left) << "' y='28' font-size='16'>" << xml_escape(title) << "</text>\n";
  for (const auto& a : allocations) {
    axes(o, a.area, a.pool.empty() ? "quanta" : "quanta in " + a.pool);
    if (!a.pool.empty())
      o << "<text x='" << num(width - right) << "' y='" << num(a.area.y0 - 6)
        << "' text-anchor='end'>nodepool " << xml_escape(a.pool) << "</text>\n";  // above: clear of the lines
  }
  axes(o, bottom, "utilization %");
  o << "<text x='" << num((left + width - right) / 2) << "' y='" << num(bottom.y1 + 36)
    << "' text-anchor='middle'>scenario time (s)</text>\n";

  // A pool's figures in a sample (zeros while the pool is not reported).
  const pool_sample none{};
  const auto in_pool = [&none](const sample& x, const std::string& pool) -> const pool_sample& {
    auto it = x.pools.find(pool);
    return it == x.pools.end() ? none : it->second;
  };
  for (const auto& a : allocations) {
    const std::string& pool = a.pool;
    step_line(
        o, a.area, s,
        [&](const sample& x) {
          return static_cast<double>(pool.empty() ? x.total_quanta : in_pool(x, pool).total_quanta);
        },
        "stroke='#999' stroke-width='1.5'");
    for (std::size_t u = 0; u < rec.users().size(); ++u) {
      // In a pool, only users that had demand or held quanta there.
      if (!pool.empty() && std::none_of(s.begin(), s.end(), [&](const sample& x) {
            const auto& p = in_pool(x, pool);
            return u < p.users.size() && (p.users[u].demand_quanta > 0 || p.users[u].held_quanta > 0);
          }))
        continue;
      const auto user_of = [&](const sample& x) -> user_sample {
        if (pool.empty()) return x.users[u];
        const auto& p = in_pool(x, pool);
        return u < p.users.size() ? p.users[u] : user_sample{};
      };
      const std::string colour = palette[u % (sizeof palette / sizeof palette[0])];
      step_line(
          o, a.area, s, [&](const sample& x) { return user_of(x).fair_quanta; },
          "stroke='" + colour + "' stroke-width='1' stroke-dasharray='5,4'");
      step_line(
          o, a.area, s, [&](const sample& x) { return static_cast<double>(user_of(x).held_quanta); },
          "stroke='" + colour + "' stroke-width='2'");
    }
  }
  const auto utilization = [](std::uint64_t used, std::uint64_t total) {
    return total > 0 ? 100.0 * static_cast<double>(used) / static_cast<double>(total) : 0.0;
  };
  if (!per_pool) {
    step_line(
        o, bottom, s, [&](const sample& x) { return utilization(x.used_quanta, x.total_quanta); },
        "stroke='#333' stroke-width='1.5'");
  } else {
    for (std::size_t k = 0; k < pools.size(); ++k) {
      const std::string dash = pool_dashes[k % (sizeof pool_dashes / sizeof pool_dashes[0])];
      step_line(
          o, bottom, s,
          [&](const sample& x) {
            const auto& p = in_pool(x, pools[k]);
            return utilization(p.used_quanta, p.total_quanta);
          },
          "stroke='#333' stroke-width='1.5'" +
              (dash.empty() ? std::string() : " stroke-dasharray='" + dash + "'"));
    }
  }

  // Legend.
  double ly = first_y0 + 10;
  const double lx = width - right + 16;
  o << "<line x1='" << num(lx) << "' y1='" << num(ly) << "' x2='" << num(lx + 24) << "' y2='" << num(ly)
    << "' stroke='#999' stroke-width='1.5'/><text x='" << num(lx + 30) << "' y='" << num(ly + 4)
    << "'>quanta up</text>\n";
  ly += 18;
  o << "<line x1='" << num(lx) << "' y1='" << num(ly) << "' x2='" << num(lx + 24) << "' y2='" << num(ly)
    << "' stroke='#444' stroke-dasharray='5,4'/><text x='" << num(lx + 30) << "' y='" << num(ly + 4)
    << "'>fair share</text>\n";
  ly += 18;
  const std::size_t shown = std::min<std::size_t>(rec.users().size(), 14);
  for (std::size_t u = 0; u < shown; ++u) {
    const std::string colour = palette[u % (sizeof palette / sizeof palette[0])];
    o << "<line x1='" << num(lx) << "' y1='" << num(ly) << "' x2='" << num(lx + 24) << "' y2='" << num(ly)
      << "' stroke='" << colour << "' stroke-width='2'/><text x='" << num(lx + 30) << "' y='" << num(ly + 4)
      << "'>" << xml_escape(rec.users()[u]) << "</text>\n";
    ly += 18;
  }
  if (rec.users().size() > shown)
    o << "<text x='" << num(lx) << "' y='" << num(ly + 4) << "'>+" << rec.users().size() - shown
      << " more users</text>\n";
  if (per_pool) {
    double uy = bottom.y0 + 10;
    for (std::size_t k = 0; k < pools.size() && k < 8; ++k) {
      const std::string dash = pool_dashes[k % (sizeof pool_dashes / sizeof pool_dashes[0])];
      o << "<line x1='" << num(lx) << "' y1='" << num(uy) << "' x2='" << num(lx + 24) << "' y2='" << num(uy)
        << "' stroke='#333' stroke-width='1.5'"
        << (dash.empty() ? std::string() : " stroke-dasharray='" + dash + "'") << "/><text x='"
        << num(lx + 30) << "' y='" << num(uy + 4) << "'>" << xml_escape(pools[k]) << "</text>\n";
      uy += 18;
    }
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace rmbus::sim
