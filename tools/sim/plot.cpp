#include "tools/sim/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

namespace rmbus::sim {

namespace {

constexpr double width = 960, height = 600;
constexpr double left = 70, right = 190;  // the legend sits in the right margin
constexpr double top_y0 = 50, top_y1 = 340, bottom_y0 = 400, bottom_y1 = 550;

// Ten colours that stay distinguishable; users beyond ten reuse them.
constexpr const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

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
  double q_max = 1;
  for (const auto& x : s) {
    q_max = std::max(q_max, static_cast<double>(x.total_quanta));
    for (const auto& u : x.users)
      q_max = std::max({q_max, static_cast<double>(u.held_quanta), u.fair_quanta});
  }
  const panel top{top_y0, top_y1, t_max, q_max * 1.05};
  const panel bottom{bottom_y0, bottom_y1, t_max, 100};

  std::ostringstream o;
  o << "<?xml version='1.0' encoding='UTF-8'?>\n";
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << num(width) << "' height='" << num(height)
    << "' viewBox='0 0 " << num(width) << " " << num(height)
    << "' font-family='sans-serif' font-size='12'>\n";
  o << "<rect width='100%' height='100%' fill='white'/>\n";
  o << "<text x='" << num(left) << "' y='28' font-size='16'>" << xml_escape(title) << "</text>\n";
  axes(o, top, "quanta");
  axes(o, bottom, "utilization %");
  o << "<text x='" << num((left + width - right) / 2) << "' y='" << num(bottom_y1 + 36)
    << "' text-anchor='middle'>scenario time (s)</text>\n";

  step_line(
      o, top, s, [](const sample& x) { return static_cast<double>(x.total_quanta); },
      "stroke='#999' stroke-width='1.5'");
  for (std::size_t u = 0; u < rec.users().size(); ++u) {
    const std::string colour = palette[u % (sizeof palette / sizeof palette[0])];
    step_line(
        o, top, s, [u](const sample& x) { return x.users[u].fair_quanta; },
        "stroke='" + colour + "' stroke-width='1' stroke-dasharray='5,4'");
    step_line(
        o, top, s, [u](const sample& x) { return static_cast<double>(x.users[u].held_quanta); },
        "stroke='" + colour + "' stroke-width='2'");
  }
  step_line(
      o, bottom, s,
      [](const sample& x) {
        return x.total_quanta > 0
                   ? 100.0 * static_cast<double>(x.used_quanta) / static_cast<double>(x.total_quanta)
                   : 0.0;
      },
      "stroke='#333' stroke-width='1.5'");

  // Legend.
  double ly = top_y0 + 10;
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
  o << "</svg>\n";
  return o.str();
}

}  // namespace rmbus::sim
