#pragma once
// Prometheus metrics of one process: counters, gauges and histograms, each a family of series told apart by
// label values, rendered in the text exposition format 0.0.4 (what `GET /metrics` serves).
//
// Decides: how a family is named and checked at registration (programmer errors throw), how many series a
// family may hold, and how values and label values are written out. Knows nothing of CAF, ZeroMQ, MessagePack
// or HTTP: the runtime owns one registry and hands it to whoever records (there is no global registry).
//
// Untrusted label values. Label values may come off the bus (a reason, a topic, a class name), so they must not
// grow memory without bound: each family holds at most `max_series` label combinations (the registry's default
// unless given at registration); an update that would create one more is dropped and counted in
// `rmbus_metrics_label_overflow_total{family}`. Label values longer than `max_label_value_bytes` are cut (at a
// UTF-8 character boundary), so two long values with the same beginning share a series.
//
// Label-less counters and gauges exist (at 0) from their registration, so a scrape shows them before anything
// happened, unless registered with presence::from_first_update (a family that only some processes may fill,
// such as the HA role: a 0 there would claim something); labelled series appear on their first update.
//
// Thread-safety: every member (and every handle's member) may be called from any thread; one mutex guards
// the whole registry, so render() is a consistent snapshot. The registry must outlive its handles.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace rmbus::metrics {

// Values of a family's labels, in the order of the label names given at registration.
using label_values = std::vector<std::string>;

// When a label-less counter or gauge first shows in a scrape.
enum class presence { from_registration, from_first_update };

struct registry_options {
  std::size_t max_series_per_family = 1000;
  std::size_t max_label_value_bytes = 128;
};

class metrics_registry;

// A counter family: only goes up.
class counter {
 public:
  // REQUIRES: labels.size() equals the family's label count (else std::invalid_argument), by >= 0.
  void inc(const label_values& labels = {}, double by = 1) const;
  // Mirrors a total counted elsewhere (e.g. the bus subscriber's own statistics).
  void set(const label_values& labels, double total) const;

 private:
  friend class metrics_registry;
  counter(metrics_registry* r, std::size_t family) : registry_(r), family_(family) {}
  metrics_registry* registry_;
  std::size_t family_;
};

// A gauge family: a value that goes up and down.
class gauge {
 public:
  void set(const label_values& labels, double value) const;
  void add(const label_values& labels, double delta) const;
  // Replaces every series of the family by `series` in one step (a scrape never sees half of it): for gauges
  // computed from a complete snapshot such as rm.state, where a label combination that vanished must go.
  void replace(const std::vector<std::pair<label_values, double>>& series) const;

 private:
  friend class metrics_registry;
  gauge(metrics_registry* r, std::size_t family) : registry_(r), family_(family) {}
  metrics_registry* registry_;
  std::size_t family_;
};

// A histogram family with fixed bucket upper bounds (the +Inf bucket is implicit).
class histogram {
 public:
  void observe(const label_values& labels, double value) const;

 private:
  friend class metrics_registry;
  histogram(metrics_registry* r, std::size_t family) : registry_(r), family_(family) {}
  metrics_registry* registry_;
  std::size_t family_;
};

class metrics_registry {
 public:
  explicit metrics_registry(registry_options options = {});
  ~metrics_registry();
  metrics_registry(const metrics_registry&) = delete;
  metrics_registry& operator=(const metrics_registry&) = delete;

  // Registration. Names must match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* and not start
  // with "__"; a name may be registered once. Violations are programming errors: std::invalid_argument.
  // `max_series` 0 means the registry's default.
  counter add_counter(std::string name, std::string help, std::vector<std::string> label_names = {},
                      std::size_t max_series = 0, presence shown = presence::from_registration);
  gauge add_gauge(std::string name, std::string help, std::vector<std::string> label_names = {},
                  std::size_t max_series = 0, presence shown = presence::from_registration);
  // REQUIRES: `bounds` non-empty, finite and strictly increasing; no label named "le".
  histogram add_histogram(std::string name, std::string help, std::vector<std::string> label_names,
                          std::vector<double> bounds, std::size_t max_series = 0);

  // The whole registry in the text exposition format 0.0.4, families in registration order, series sorted
  // by label values.
  std::string render() const;

 private:
  friend class counter;
  friend class gauge;
  friend class histogram;
  struct family;
  struct series;

  std::size_t add_family(std::string name, std::string help, int type, std::vector<std::string> label_names,
                         std::vector<double> bounds, std::size_t max_series,
                         presence shown = presence::from_registration);
  // The series for `labels`, created if there is room; nullptr (and the overflow counted) if not.
  // REQUIRES: mutex_ held.
  series* find_or_add(family& f, const label_values& labels);

  registry_options options_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<family>> families_;
  std::size_t overflow_family_ = 0;
};

// Text helpers of the exposition format, exposed for tests.
std::string escape_label_value(const std::string& value);  // \ " and newline escaped
std::string format_value(double value);                     // 42, 0.25, 1e+300, +Inf, -Inf, NaN

}  // namespace rmbus::metrics
