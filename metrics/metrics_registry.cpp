#include "metrics/metrics_registry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace rmbus::metrics {

namespace {

enum family_type { counter_type, gauge_type, histogram_type };

const char* type_name(int t) {
  switch (t) {
    case counter_type: return "counter";
    case gauge_type: return "gauge";
    default: return "histogram";
  }
}

bool valid_name(const std::string& n, bool colon_allowed) {
  if (n.empty()) return false;
  auto ok = [&](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_allowed && c == ':') ||
           (!first && c >= '0' && c <= '9');
  };
  for (std::size_t i = 0; i < n.size(); ++i)
    if (!ok(n[i], i == 0)) return false;
  return true;
}

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence (continuation bytes are 10xxxxxx).
std::string cut_utf8(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

std::string escape_help(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Whole numbers (the common case: counts, microseconds) are written as integers.
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
  return ec == std::errc{} ? std::string(buf, end) : std::string{"NaN"};
}

struct metrics_registry::series {
  double value = 0;                    // counter, gauge
  std::vector<std::uint64_t> buckets;  // histogram: observations <= bounds[i] (not cumulative here)
  std::uint64_t count = 0;             // histogram
  double sum = 0;                      // histogram
};

struct metrics_registry::family {
  std::string name;
  std::string help;
  int type = counter_type;
  std::vector<std::string> label_names;
  std::vector<double> bounds;
  std::size_t max_series = 0;
  std::map<label_values, series> series_by_labels;  // ordered: render is deterministic
};

metrics_registry::metrics_registry(registry_options options) : options_(options) {
  overflow_family_ = add_family("rmbus_metrics_label_overflow_total",
                                "Updates dropped because their metric family already holds its maximum number of "
                                "label combinations (label values from the bus are untrusted).",
                                counter_type, {"family"}, {}, 0);
}

metrics_registry::~metrics_registry() = default;

std::size_t metrics_registry::add_family(std::string name, std::string help, int type,
                                         std::vector<std::string> label_names, std::vector<double> bounds,
                                         std::size_t max_series, presence shown) {
  if (!valid_name(name, true)) throw std::invalid_argument("metrics: bad metric name '" + name + "'");
  for (const auto& l : label_names) {
    if (!valid_name(l, false) || l.rfind("__", 0) == 0)
      throw std::invalid_argument("metrics: " + name + ": bad label name '" + l + "'");
    if (type == histogram_type && l == "le")
      throw std::invalid_argument("metrics: " + name + ": a histogram may not have a label named 'le'");
    if (std::count(label_names.begin(), label_names.end(), l) != 1)
      throw std::invalid_argument("metrics: " + name + ": label '" + l + "' given twice");
  }
  if (type == histogram_type) {
    if (bounds.empty()) throw std::invalid_argument("metrics: " + name + ": a histogram needs bucket bounds");
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
        throw std::invalid_argument("metrics: " + name + ": bucket bounds must be finite and strictly increasing");
    }
  }
  std::lock_guard lock{mutex_};
  for (const auto& f : families_) {
    // A histogram also owns name_bucket, name_sum and name_count; checking the base names is enough for ours.
    if (f->name == name) throw std::invalid_argument("metrics: '" + name + "' is registered twice");
  }
  auto f = std::make_unique<family>();
  f->name = std::move(name);
  f->help = std::move(help);
  f->type = type;
  f->label_names = std::move(label_names);
  f->bounds = std::move(bounds);
  f->max_series = max_series == 0 ? options_.max_series_per_family : max_series;
  if (f->label_names.empty() && type != histogram_type && shown == presence::from_registration)
    f->series_by_labels.emplace(label_values{}, series{});
  families_.push_back(std::move(f));
  return families_.size() - 1;
}

counter metrics_registry::add_counter(std::string name, std::string help, std::vector<std::string> label_names,
                                      std::size_t max_series, presence shown) {
  return counter{this,
                 add_family(std::move(name), std::move(help), counter_type, std::move(label_names), {}, max_series, shown)};
}

gauge metrics_registry::add_gauge(std::string name, std::string help, std::vector<std::string> label_names,
                                  std::size_t max_series, presence shown) {
  return gauge{this,
               add_family(std::move(name), std::move(help), gauge_type, std::move(label_names), {}, max_series, shown)};
}

histogram metrics_registry::add_histogram(std::string name, std::string help, std::vector<std::string> label_names,
                                          std::vector<double> bounds, std::size_t max_series) {
  return histogram{this, add_family(std::move(name), std::move(help), histogram_type, std::move(label_names),
                                    std::move(bounds), max_series)};
}

metrics_registry::series* metrics_registry::find_or_add(family& f, const label_values& labels) {
  if (labels.size() != f.label_names.size()) {
    throw std::invalid_argument("metrics: " + f.name + " takes " + std::to_string(f.label_names.size()) +
                                " label value(s), got " + std::to_string(labels.size()));
  }
  label_values key;
  key.reserve(labels.size());
  for (const auto& l : labels) key.push_back(cut_utf8(l, options_.max_label_value_bytes));
  auto it = f.series_by_labels.find(key);
  if (it != f.series_by_labels.end()) return &it->second;
  if (f.series_by_labels.size() >= f.max_series) {
    auto& overflow = *families_[overflow_family_];
    if (&f != &overflow) {
      // The overflow family is keyed by our own family names, so it cannot overflow itself in practice.
      auto o = overflow.series_by_labels.find(label_values{f.name});
      if (o == overflow.series_by_labels.end() && overflow.series_by_labels.size() < overflow.max_series)
        o = overflow.series_by_labels.emplace(label_values{f.name}, series{}).first;
      if (o != overflow.series_by_labels.end()) o->second.value += 1;
    }
    return nullptr;
  }
  series s;
  if (f.type == histogram_type) s.buckets.assign(f.bounds.size(), 0);
  return &f.series_by_labels.emplace(std::move(key), std::move(s)).first->second;
}

void counter::inc(const label_values& labels, double by) const {
  if (!(by >= 0)) throw std::invalid_argument("metrics: a counter only goes up");
  std::lock_guard lock{registry_->mutex_};
  if (auto* s = registry_->find_or_add(*registry_->families_[family_], labels)) s->value += by;
}

void counter::set(const label_values& labels, double total) const {
  std::lock_guard lock{registry_->mutex_};
  if (auto* s = registry_->find_or_add(*registry_->families_[family_], labels)) s->value = total;
}

void gauge::set(const label_values& labels, double value) const {
  std::lock_guard lock{registry_->mutex_};
  if (auto* s = registry_->find_or_add(*registry_->families_[family_], labels)) s->value = value;
}

void gauge::add(const label_values& labels, double delta) const {
  std::lock_guard lock{registry_->mutex_};
  if (auto* s = registry_->find_or_add(*registry_->families_[family_], labels)) s->value += delta;
}

void gauge::replace(const std::vector<std::pair<label_values, double>>& series) const {
  std::lock_guard lock{registry_->mutex_};
  auto& f = *registry_->families_[family_];
  for (const auto& entry : series) {  // arity checked before anything changes
    if (entry.first.size() != f.label_names.size())
      throw std::invalid_argument("metrics: " + f.name + " takes " + std::to_string(f.label_names.size()) +
                                  " label value(s), got " + std::to_string(entry.first.size()));
  }
  f.series_by_labels.clear();
  for (const auto& [labels, v] : series)
    if (auto* s = registry_->find_or_add(f, labels)) s->value = v;
}

void histogram::observe(const label_values& labels, double value) const {
  std::lock_guard lock{registry_->mutex_};
  auto& f = *registry_->families_[family_];
  auto* s = registry_->find_or_add(f, labels);
  if (s == nullptr) return;
  // First bucket whose upper bound holds the value; past the last bound only +Inf (count) holds it.
  auto it = std::lower_bound(f.bounds.begin(), f.bounds.end(), value);
  if (it != f.bounds.end()) ++s->buckets[static_cast<std::size_t>(it - f.bounds.begin())];
  ++s->count;
  s->sum += value;
}

std::string metrics_registry::render() const {
  std::string out;
  auto labels_text = [](const family& f, const label_values& values, const std::string* le) {
    if (f.label_names.empty() && le == nullptr) return std::string{};
    std::string t = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) t += ",";
      t += f.label_names[i] + "=\"" + escape_label_value(values[i]) + "\"";
    }
    if (le != nullptr) t += std::string{values.empty() ? "" : ","} + "le=\"" + *le + "\"";
    return t + "}";
  };
  std::lock_guard lock{mutex_};
  for (const auto& fp : families_) {
    const auto& f = *fp;
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + type_name(f.type) + "\n";
    for (const auto& [labels, s] : f.series_by_labels) {
      if (f.type != histogram_type) {
        out += f.name + labels_text(f, labels, nullptr) + " " + format_value(s.value) + "\n";
        continue;
      }
      std::uint64_t cumulative = 0;
      for (std::size_t i = 0; i < f.bounds.size(); ++i) {
        cumulative += s.buckets[i];
        const auto le = format_value(f.bounds[i]);
        out += f.name + "_bucket" + labels_text(f, labels, &le) + " " + std::to_string(cumulative) + "\n";
      }
      const std::string inf = "+Inf";
      out += f.name + "_bucket" + labels_text(f, labels, &inf) + " " + std::to_string(s.count) + "\n";
      out += f.name + "_sum" + labels_text(f, labels, nullptr) + " " + format_value(s.sum) + "\n";
      out += f.name + "_count" + labels_text(f, labels, nullptr) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace rmbus::metrics
