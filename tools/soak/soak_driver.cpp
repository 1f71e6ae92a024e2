#include "tools/soak/soak_driver.hpp"

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "tests/support/child_process.hpp"
#include "tests/support/fake_cluster.hpp"
#include "tools/soak/soak_checks.hpp"

namespace rmbus::soak {

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Two fair-share classes at one priority, weighted 2:1, on one pool that takes every node: the fair share is
// then a plain weighted water-fill that tools/sim/fair_share.hpp computes independently of the RM.
const std::vector<soak_class> soak_classes{{"normal", 100, 10}, {"low", 50, 10}};

// Logged at info, so that a takeover that does not come can be read afterwards in rmbus-N.log.
std::string soak_config(int heartbeat_ms) {
  std::ostringstream o;
  o << "[scheduling]\nquantum = \"1G\"\n\n[timing]\nheartbeat_interval_ms = " << heartbeat_ms
    << "\nnode_stability = 4\ninit_stability = 2\nround_timeout_ms = 3000\n\n[log]\nlevel = \"info\"\n\n"
    << "[[nodepool]]\nname = \"soak\"\n\n";
  for (const auto& c : soak_classes)
    o << "[[class]]\nname = \"" << c.name << "\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"soak\"\npriority = "
      << c.priority << "\nweight = " << c.weight << (c.name == "normal" ? "\ndefault = true" : "") << "\n\n";
  return o.str();
}

// Every rm.state acted on, in order, from the cluster's subscriber thread to the soak's thread, with what the
// orchestrator ran right after following it, its epoch and when it came.
struct acted_state {
  messages::rm_state state;
  std::set<std::string> processes;
  std::uint64_t epoch = 0;
  std::optional<std::uint64_t> map_echo;  // the epoch echoed by the map its round answered
  clock_type::time_point at;
};

class state_queue {
 public:
  void push(acted_state s) {
    std::lock_guard<std::mutex> lock(mu_);
    states_.push_back(std::move(s));
    cv_.notify_all();
  }
  std::optional<acted_state> pop(clock_type::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_until(lock, deadline, [&] { return !states_.empty(); })) return std::nullopt;
    auto s = std::move(states_.front());
    states_.pop_front();
    return s;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<acted_state> states_;
};

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double max_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

class soak_run {
 public:
  soak_run(const soak_options& o, std::ostream& out) : opt_(o), out_(out), rng_(o.seed) {}

  soak_summary run() {
    sum_.kills_asked = opt_.kills;
    std::filesystem::create_directories(opt_.work_dir);
    config_ = opt_.work_dir + "/rmbus.toml";
    std::ofstream{config_} << soak_config(opt_.heartbeat_ms);
    pub_ = test_support::loopback(test_support::free_port());
    sub_ = test_support::loopback(test_support::free_port());
    admin_ = test_support::loopback(test_support::free_port());
    if (opt_.ha) {
      candidate_count_ = opt_.partition ? 3 : 2;
      for (std::size_t i = 0; i < candidate_count_; ++i) {
        ha_admins_[i] = test_support::loopback(test_support::free_port());
        std::ofstream{opt_.work_dir + "/rmbus-" + std::to_string(i) + ".toml"}
            << soak_config(opt_.heartbeat_ms) << "[ha]\nenabled = true\nrank = " << i << "\n";
      }
      if (opt_.partition) {
        // Forwarder i carries candidate i to the cluster; the last one, shared by the candidates alone, is the
        // link between them that each kill cuts.
        pub_.clear();
        sub_.clear();
        for (std::size_t k = 0; k <= candidate_count_; ++k) {
          fwd_pub_.push_back(test_support::loopback(test_support::free_port()));
          fwd_sub_.push_back(test_support::loopback(test_support::free_port()));
          start_forwarder(k);
          if (k < candidate_count_) {
            pub_ += (pub_.empty() ? "" : ",") + fwd_pub_.back();
            sub_ += (sub_.empty() ? "" : ",") + fwd_sub_.back();
          }
        }
      } else {
        proxy_ = std::make_unique<test_support::child_process>(
            opt_.proxy_path, std::vector<std::string>{"--bus-pub", pub_, "--bus-sub", sub_}, opt_.work_dir + "/proxy.log");
      }
    }
    for (int i = 1; i <= opt_.nodes; ++i) node_order_["s" + std::to_string(i)] = 8;
    start_rm();

    test_support::cluster_options co;
    co.bus_pub = pub_;
    co.bus_sub = sub_;
    co.period = std::chrono::milliseconds(map_period_ms());
    co.name = "rmbus-soak";
    co.quantum_mb = 1024;  // the orchestrator's own count of nodes above their order
    co.omit_node_memory = opt_.no_node_memory;
    co.map_on_new_epoch = opt_.map_on_new_epoch;
    cluster_ = std::make_unique<test_support::fake_cluster>(co);
    for (const auto& [name, order] : node_order_) cluster_->add_node(name, order * 1024);
    cluster_->set_acted_observer([this](const test_support::fake_cluster::acted_view& v) {
      queue_.push({v.state, v.processes, v.env.epoch.value_or(0), v.map_echo, clock_type::now()});
    });
    cluster_->start();
    started_ = clock_type::now();

    for (int i = 0; i < 3; ++i) submit_job();
    if (!next_state(clock_type::now() + 30s)) {
      out_ << "soak: rmbus published no schedule within 30 s (log: " << opt_.work_dir << "/rmbus.log)\n";
      return finish();
    }
    sum_.ready = true;
    // The work settles before the first kill, so the first pre-kill schedule is a steady one.
    wait_steady(40);

    for (int k = 1; k <= opt_.kills; ++k) {
      if (clock_type::now() - started_ > opt_.time_bound) {
        sum_.time_bound_hit = true;
        out_ << "soak: time bound of " << opt_.time_bound.count() << " s reached before kill " << k << "\n";
        break;
      }
      change_work();
      const auto wait = std::chrono::milliseconds(
          std::uniform_int_distribution<int>(opt_.kill_min_ms, opt_.kill_max_ms)(rng_));
      if (opt_.partition) {
        // The cut lands in the last 800 ms before the kill: sooner, the standbys would miss the active's beacons
        // for a whole takeover time and take over from a live active (a partition of its own, which the
        // election handles as well, but not the one this soak is about).
        const auto before_kill = std::min<std::chrono::milliseconds>(wait, 800ms) *
                                 std::uniform_int_distribution<int>(0, 100)(rng_) / 100;
        const auto cut = wait - before_kill;
        drain_until(clock_type::now() + cut);
        stop_forwarder(candidate_count_);
        drain_until(clock_type::now() + (wait - cut));
      } else {
        drain_until(clock_type::now() + wait);
      }
      kill_and_check(k);
      if (opt_.partition) {
        drain_until(clock_type::now() + std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 2000)(rng_)));
        start_forwarder(candidate_count_);
      }
    }
    return finish();
  }

  ~soak_run() {
    if (cluster_) cluster_->stop();
    if (rm_) {
      rm_->signal(SIGTERM);
      rm_->wait(10s);
    }
    for (auto& c : candidates_)
      if (c) c->signal(SIGTERM);
    for (auto& c : candidates_)
      if (c) c->wait(10s);
    if (proxy_) {
      proxy_->signal(SIGTERM);
      proxy_->wait(10s);
    }
    for (std::size_t k = 0; k < forwarders_.size(); ++k) stop_forwarder(k);
  }

 private:
  void start_rm() {
    if (opt_.ha) {
      for (std::size_t i = 0; i < candidate_count_; ++i) start_candidate(i);
      return;
    }
    rm_ = std::make_unique<test_support::child_process>(
        opt_.rmbus_path,
        std::vector<std::string>{"--config", config_, "--bus-pub", pub_, "--bus-sub", sub_, "--admin", admin_, "--metrics", "off"},
        opt_.work_dir + "/rmbus.log");
  }

  // HA: candidate i (rank i) with its own configuration and admin endpoint, on the standalone forwarder (with
  // --partition: on its own forwarder and the one the candidates share).
  void start_candidate(std::size_t i) {
    const auto n = std::to_string(i);
    auto pub = pub_, sub = sub_;
    if (opt_.partition) {
      pub = fwd_pub_.at(i) + "," + fwd_pub_.at(candidate_count_);
      sub = fwd_sub_.at(i) + "," + fwd_sub_.at(candidate_count_);
    }
    candidates_[i] = std::make_unique<test_support::child_process>(
        opt_.rmbus_path,
        std::vector<std::string>{"--config", opt_.work_dir + "/rmbus-" + n + ".toml", "--bus-pub", pub, "--bus-sub",
                                 sub, "--admin", ha_admins_[i], "--metrics", "off", "--no-forwarder"},
        opt_.work_dir + "/rmbus-" + n + ".log");
  }

  void start_forwarder(std::size_t k) {
    if (forwarders_.size() <= k) forwarders_.resize(k + 1);
    forwarders_[k] = std::make_unique<test_support::child_process>(
        opt_.proxy_path, std::vector<std::string>{"--bus-pub", fwd_pub_.at(k), "--bus-sub", fwd_sub_.at(k)},
        opt_.work_dir + "/proxy-" + std::to_string(k) + ".log");
  }

  void stop_forwarder(std::size_t k) {
    if (k >= forwarders_.size() || !forwarders_[k]) return;
    forwarders_[k]->signal(SIGTERM);
    forwarders_[k]->wait(10s);
    forwarders_[k].reset();
  }

  // HA: the candidate whose instance (rmbus.<pid>.<start>) sent the last schedule acted on.
  std::optional<std::size_t> active_candidate() const {
    const auto env = cluster_->last_state_envelope();
    if (!env) return std::nullopt;
    for (std::size_t i = 0; i < candidate_count_; ++i)
      if (candidates_[i] && env->src.rfind("rmbus." + std::to_string(candidates_[i]->pid()) + ".", 0) == 0) return i;
    return std::nullopt;
  }

  // HA, rule 5: the epochs acted on never go down (the fake orchestrator fences; this checks it did).
  void check_epochs() {
    const auto acted = cluster_->acted();
    for (std::size_t i = std::max<std::size_t>(1, epochs_checked_); i < acted.size(); ++i)
      if (acted[i].epoch < acted[i - 1].epoch) {
        violation("epoch", "a schedule of epoch " + std::to_string(acted[i].epoch) + " from " + acted[i].src +
                               " acted on after epoch " + std::to_string(acted[i - 1].epoch));
        ++sum_.lower_epoch_acted;
      }
    epochs_checked_ = acted.size();
  }

  // After each recovery: the orchestrator, counting the processes it runs, saw no node above its order.
  void check_orchestrator_orders(int k) {
    const auto over = cluster_->over_order();
    if (over.sightings <= over_order_seen_) return;
    violation("order", "the orchestrator saw a node above its order " + std::to_string(over.sightings - over_order_seen_) +
                           " time(s) after kill " + std::to_string(k) + "; the first ever: " + over.first);
    sum_.orchestrator_over_order += over.sightings - over_order_seen_;
    over_order_seen_ = over.sightings;
  }

  // Partition, after each recovery: from the first schedule of the newest epoch on the orchestrator acted on one
  // instance only (the loser stepped down at the echo).
  void check_partition(int k, std::uint64_t epoch_at_kill) {
    const auto acted = cluster_->acted();
    const auto newest = cluster_->accepted_epoch().value_or(0);
    std::set<std::uint64_t> epochs;
    std::set<std::string> instances;
    bool from_first = false;
    for (const auto& a : acted) {
      if (a.epoch > epoch_at_kill) epochs.insert(a.epoch);
      from_first = from_first || a.epoch == newest;
      if (from_first) instances.insert(a.src.substr(0, a.src.find(':')));
    }
    sum_.epochs_per_failover.push_back(static_cast<double>(epochs.size()));
    if (instances.size() > 1) {
      violation("ha", "after kill " + std::to_string(k) + " the orchestrator acted on " +
                          std::to_string(instances.size()) + " instances from the first schedule of epoch " +
                          std::to_string(newest) + " on");
      ++sum_.split_actives;
    }
  }

  // The next rm.state, with rules 2 and 3 checked on it (every state, whatever else is waiting for it).
  std::optional<messages::rm_state> next_state(clock_type::time_point deadline) {
    auto a = queue_.pop(deadline);
    if (!a) return std::nullopt;
    auto& s = a->state;
    ++sum_.states_checked;
    last_knows_all_ = a->map_echo && *a->map_echo >= a->epoch;
    for (const auto& p : over_order(s, node_order_, &a->processes)) {
      violation("order", p);
      ++sum_.over_order;
    }
    if (!over_order(s, node_order_).empty()) ++sum_.over_order_held;
    watch_first_grant(*a);
    for (const auto& p : ledger_.observe(s, life_)) {
      violation("share id", p);
      ++sum_.reused_ids;
    }
    auto per_job = processes_per_job(s);
    same_in_a_row_ = same_in_a_row_ < 0 ? same_in_a_row_ + 1 : per_job == last_per_job_ ? same_in_a_row_ + 1 : 0;
    last_per_job_ = std::move(per_job);
    last_ = s;
    return std::move(s);
  }

  // HA: after a kill, the first `new` share coined under an epoch above the killed one's (its id carries
  // "-e<epoch>."), timed from the kill and from the first state of that epoch. Only a failover in which the
  // handshake held work back counts (a state of the new epoch lists a job waiting "for the orchestrator to accept
  // epoch ..."): after the others the first grant waits for the soak's next arrival, which times the workload,
  // not the failover. Those, and kills after which nothing was granted before the next kill, are counted apart.
  struct grant_watch {
    std::uint64_t epoch_at_kill = 0;
    clock_type::time_point killed_at;
    std::optional<clock_type::time_point> epoch_seen_at;
    bool work_held = false;
  };
  void watch_first_grant(const acted_state& a) {
    if (!grant_watch_ || a.epoch <= grant_watch_->epoch_at_kill) return;
    auto& w = *grant_watch_;
    if (!w.epoch_seen_at) w.epoch_seen_at = a.at;
    const std::string tag = "-e" + std::to_string(a.epoch) + ".";
    for (const auto& j : a.state.jobs) {
      w.work_held = w.work_held || j.reason.find("waiting for the orchestrator to accept epoch") != std::string::npos;
      for (const auto& sh : j.shares)
        if (sh.status == messages::share_status::new_ && sh.id.find(tag) != std::string::npos) {
          const auto ms = [&](clock_type::time_point from) {
            return std::chrono::duration<double, std::milli>(a.at - from).count();
          };
          if (w.work_held) {
            sum_.first_grant_ms.push_back(ms(w.killed_at));
            sum_.first_grant_after_epoch_ms.push_back(ms(*w.epoch_seen_at));
          } else {
            ++sum_.failovers_without_held_work;
          }
          grant_watch_.reset();
          return;
        }
    }
  }
  // HA: how long each epoch that took over waited for the orchestrator's echo, as its `ha_echo_accepted` event
  // says (`waited_ms`, from the takeover); epochs without the event are counted.
  void collect_echo_waits() {
    std::map<std::uint64_t, double> waited;
    for (const auto& e : cluster_->events()) {
      if (e.kind != "ha_echo_accepted") continue;
      const auto epoch = e.detail.find("epoch"), ms = e.detail.find("waited_ms");
      if (epoch == e.detail.end() || ms == e.detail.end()) continue;
      waited[std::stoull(epoch->second)] = std::stod(ms->second);
    }
    for (const auto epoch : sum_.failover_epochs) {
      if (auto it = waited.find(epoch); it != waited.end())
        sum_.echo_wait_ms.push_back(it->second);
      else
        ++sum_.echo_waits_unreported;
    }
  }
  void open_grant_watch(std::uint64_t epoch_at_kill, clock_type::time_point killed_at) {
    if (grant_watch_) ++sum_.failovers_without_grant;
    grant_watch_ = grant_watch{epoch_at_kill, killed_at, std::nullopt};
  }

  // Rule 1 on a state after a restart or a failover. HA: a new active lists what its seed and its last map know,
  // and that map may predate processes its predecessor's last schedules started (the map period is the gap);
  // it grants nothing until a map echoes its epoch, which lists them, and an unlisted process is not stopped
  // (docs/protocol.md 4.3). So the rule is checked on its first state from such a map; what the states before
  // it missed is counted apart.
  void check_recovery(const messages::rm_state& s, const std::vector<running_process>& procs,
                      std::optional<recovery_count>& first) {
    if (opt_.ha && !last_knows_all_) {
      if (!unlisted_counted_) sum_.unlisted_before_echo += count_recovered(s, procs).problems.size();
      unlisted_counted_ = true;
      return;
    }
    first = count_recovered(s, procs);
    for (const auto& p : first->problems) violation("recovery", p);
    sum_.processes_lost += first->problems.size();
  }

  void drain_until(clock_type::time_point t) {
    while (clock_type::now() < t) next_state(t);
  }

  // Waits (at most `limit` states) until three states in a row give every job the same number of processes.
  void wait_steady(int limit) {
    for (int i = 0; i < limit && same_in_a_row_ < 2; ++i)
      if (!next_state(clock_type::now() + 10s)) return;
  }

  void submit_job() {
    soak_job j;
    j.id = "j" + std::to_string(++job_count_);
    j.user = "u" + std::to_string(std::uniform_int_distribution<int>(1, 4)(rng_));
    j.class_name = soak_classes[std::uniform_int_distribution<std::size_t>(0, soak_classes.size() - 1)(rng_)].name;
    j.order = std::uniform_int_distribution<std::uint64_t>(1, 2)(rng_);
    j.max_processes = std::uniform_int_distribution<std::uint64_t>(2, 24)(rng_);
    test_support::job_spec spec;
    spec.id = j.id;
    spec.user = j.user;
    spec.class_name = j.class_name;
    spec.memory_mb = j.order * 1024;
    spec.max_processes = j.max_processes;
    spec.items_total = 1'000'000;
    cluster_->submit(spec);
    jobs_.push_back(j);
    work_changed();
  }

  // The schedules received next may still answer a work map from before the change (one is in flight): the
  // count of identical schedules starts again two schedules later.
  void work_changed() { same_in_a_row_ = -2; }

  // Work arrives and leaves between kills: the RM is killed while it grows, shrinks and preempts.
  void change_work() {
    const int roll = std::uniform_int_distribution<int>(0, 9)(rng_);
    if (roll < 3 && jobs_.size() < 6) {
      submit_job();
    } else if (roll < 5 && jobs_.size() > 2) {
      const auto i = std::uniform_int_distribution<std::size_t>(0, jobs_.size() - 1)(rng_);
      cluster_->complete(jobs_[i].id);
      jobs_.erase(jobs_.begin() + static_cast<std::ptrdiff_t>(i));
      work_changed();
    }
  }

  void kill_and_check(int k) {
    std::optional<std::size_t> killed;
    std::uint64_t epoch_at_kill = 0;
    clock_type::time_point killed_at;
    if (opt_.ha) {
      killed = active_candidate();
      if (!killed) {
        violation("ha", "no candidate is known to be active before kill " + std::to_string(k));
        ++sum_.no_takeover;
        return;
      }
      epoch_at_kill = cluster_->accepted_epoch().value_or(0);
      killed_at = clock_type::now();
      open_grant_watch(epoch_at_kill, killed_at);
      unlisted_counted_ = false;
      candidates_[*killed]->signal(SIGKILL);
      candidates_[*killed]->wait(10s);
    } else {
      rm_->signal(SIGKILL);
      rm_->wait(10s);
    }
    // What the orchestrator runs now is what a restarted RM must find (no rm.state can change it: the RM and
    // its forwarder are gone). The schedule before the kill is the last one received.
    // States published before death and not yet read (the orchestrator already followed them) are checked too.
    while (next_state(clock_type::now())) {
    }
    std::vector<running_process> procs;
    for (const auto& w : cluster_->workmap().work)
      for (const auto& p : w.processes) procs.push_back({w.id, p.id, p.node});
    const auto before = last_per_job_;
    // Steady: the last three schedules before the kill gave every job the same number of processes. Then the
    // restarted RM must come back to exactly that schedule. A kill in the middle of a change (work arrived or
    // left, a job ramping up or being preempted) has no such fixed point: there the schedule must come back
    // to the pre-kill one, reach the independent fair share, or settle (three identical rounds) in the bound.
    const bool steady = same_in_a_row_ >= 2;
    if (steady) ++sum_.steady_kills;
    sum_.processes_at_kills += procs.size();
    ++life_;
    const auto restarted = clock_type::now();
    if (!opt_.ha) start_rm();
    bool restarted_standby = !opt_.ha;

    std::uint64_t problems_before = sum_.violations();
    std::optional<recovery_count> first;
    int rounds = 0;
    bool back = false;
    std::string why;
    const char* target = "";
    while (rounds < opt_.recover_rounds) {
      auto s = next_state(clock_type::now() + 30s);
      if (!s) {
        why = "no schedule within 30 s";
        break;
      }
      if (!restarted_standby) {
        // HA: the first schedule after the kill is the new active's (the dead one publishes nothing more).
        const auto epoch = cluster_->accepted_epoch().value_or(0);
        if (epoch <= epoch_at_kill) continue;
        sum_.failover_ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - killed_at).count());
        sum_.failover_epochs.push_back(epoch);
        start_candidate(*killed);  // back as a standby
        restarted_standby = true;
      }
      ++rounds;
      if (opt_.trace) out_ << "    round " << rounds << " after restart:\n" << describe(*s);
      if (!first) check_recovery(*s, procs, first);
      if (last_per_job_ == before) {
        back = true;
        target = "the pre-kill schedule";
        break;
      }
      if (steady) {
        why = "the pre-kill schedule was steady";
        continue;
      }
      if (at_fair_share(*s, jobs_, soak_classes, capacity(), &why)) {
        back = true;
        target = "the fair share";
        ++sum_.back_at_fair_share;
        break;
      }
      if (rounds >= 3 && same_in_a_row_ >= 2) {
        back = true;
        target = "a steady schedule";
        ++sum_.back_settled;
        break;
      }
    }
    const double secs = std::chrono::duration<double>(clock_type::now() - restarted).count();
    check_orchestrator_orders(k);
    if (opt_.ha) {
      check_epochs();
      if (opt_.partition) check_partition(k, epoch_at_kill);
      if (!restarted_standby) {
        violation("ha", "no schedule of a new epoch after kill " + std::to_string(k));
        ++sum_.no_takeover;
        start_candidate(*killed);
      }
    }
    // HA: the recovery rule waits for the new active's first state from a map that echoes its epoch (at most
    // 10 s more; see check_recovery).
    for (const auto until = clock_type::now() + 10s; !first && restarted_standby && clock_type::now() < until;)
      if (auto s = next_state(until)) check_recovery(*s, procs, first);
    if (!first) {
      sum_.processes_lost += procs.size();
      first = recovery_count{};
    }
    if (back) {
      sum_.rounds_to_recover.push_back(rounds);
      sum_.seconds_to_recover.push_back(secs);
    } else {
      ++sum_.not_back;
      violation("schedule", "not back to the pre-kill schedule or the fair share within " +
                                std::to_string(opt_.recover_rounds) + " rounds: " + why);
      if (last_) out_ << describe(*last_);
      out_ << "    before the kill (" << (steady ? "steady" : "changing") << "):";
      for (const auto& [j, n] : before) out_ << " " << j << "=" << n;
      out_ << "\n";
    }
    const auto new_problems = sum_.violations() - problems_before;
    if (new_problems == 0) ++sum_.kills_survived;
    out_ << "kill " << k << "/" << opt_.kills << (steady ? " (steady)" : " (changing)") << ": recovered "
         << first->recovered() << "/" << procs.size();
    if (first->preempted > 0) out_ << " (" << first->preempted << " preempted at once)";
    if (back)
      out_ << ", " << target << " after " << rounds << " round(s), " << static_cast<int>(secs * 1000) << " ms";
    if (opt_.ha && !sum_.failover_ms.empty() && restarted_standby)
      out_ << ", failover " << static_cast<int>(sum_.failover_ms.back()) << " ms to epoch "
           << cluster_->accepted_epoch().value_or(0);
    out_ << ", violations " << new_problems << std::endl;
  }

  // Each job as the soak asked and as the RM last scheduled it, for a person reading a violation.
  std::string describe(const messages::rm_state& s) const {
    std::ostringstream o;
    const auto held = processes_per_job(s);
    for (const auto& j : jobs_) {
      const auto* sj = test_support::find_job(s, j.id);
      o << "    " << j.id << " " << j.user << " " << j.class_name << " order " << j.order << ": "
        << (held.count(j.id) ? held.at(j.id) : 0) << " of max " << j.max_processes;
      if (sj) o << " (RM: given " << sj->given << ", demand " << sj->demand << ", fair share " << sj->fair_share
                << (sj->reason.empty() ? "" : ", " + sj->reason) << ")";
      if (sj) {
        int p = 0;
        for (const auto& sh : sj->shares) p += sh.status == messages::share_status::preempt;
        if (p) o << " preempting " << p;
      }
      o << "\n";
    }
    return o.str();
  }

  double capacity() const {
    double q = 0;
    for (const auto& [n, o] : node_order_) q += static_cast<double>(o);
    return q;
  }

  // The fake cluster's period: its work maps and its agents' heartbeats, inside the RM's heartbeat interval.
  int map_period_ms() const { return std::max(50, opt_.heartbeat_ms * 2 / 3); }

  void violation(const char* rule, const std::string& what) { out_ << "  VIOLATION (" << rule << "): " << what << "\n"; }

  soak_summary finish() {
    if (grant_watch_) ++sum_.failovers_without_grant;
    grant_watch_.reset();
    if (opt_.ha) collect_echo_waits();
    sum_.share_ids = ledger_.size();
    const double elapsed = std::chrono::duration<double>(clock_type::now() - started_).count();
    std::vector<double> rounds(sum_.rounds_to_recover.begin(), sum_.rounds_to_recover.end());
    out_ << "\nsoak summary (seed " << opt_.seed << ", " << static_cast<int>(elapsed) << " s, heartbeat "
         << opt_.heartbeat_ms << " ms, " << opt_.nodes << " nodes)\n"
         << "  kills survived:              " << sum_.kills_survived << "/" << sum_.kills_asked << "\n"
         << "  processes running at kills:  " << sum_.processes_at_kills << "\n"
         << "  processes lost:              " << sum_.processes_lost << "\n"
         << "  schedules above an order:    " << sum_.over_order << " (at the orchestrator, nodes seen above: "
         << sum_.orchestrator_over_order << ")\n"
         << "  above an order counting shares taken back before they started (space held, not a violation): "
         << sum_.over_order_held << "\n"
         << "  reused share ids:            " << sum_.reused_ids << " (of " << sum_.share_ids << " ids seen)\n"
         << "  kills in a steady schedule:  " << sum_.steady_kills << " (the rest while the schedule was changing)\n"
         << "  schedules not back in time:  " << sum_.not_back << "\n"
         << "  back to the pre-kill one:    " << sum_.rounds_to_recover.size() - sum_.back_at_fair_share - sum_.back_settled
         << ", to the fair share: " << sum_.back_at_fair_share << ", settled elsewhere: " << sum_.back_settled << "\n"
         << "  rounds to recover:           median " << median_of(rounds) << ", max "
         << max_of(rounds) << " (bound "
         << opt_.recover_rounds << ")\n"
         << "  seconds to recover:          median " << median_of(sum_.seconds_to_recover) << ", max "
         << max_of(sum_.seconds_to_recover) << "\n"
         << "  rm.state messages checked:   " << sum_.states_checked << "\n";
    if (opt_.ha) {
      auto f = sum_.failover_ms;
      std::sort(f.begin(), f.end());
      out_ << "  HA failovers:                " << f.size() << " (no new epoch in time: " << sum_.no_takeover << ")\n"
           << "  kill to first new-epoch state: median " << median_of(f) << " ms, max " << (f.empty() ? 0 : f.back())
           << " ms\n"
           << "  echo wait (takeover to the orchestrator's echo, ha_echo_accepted): median "
           << median_of(sum_.echo_wait_ms) << " ms, max " << max_of(sum_.echo_wait_ms) << " ms ("
           << sum_.echo_wait_ms.size() << " epochs; " << sum_.echo_waits_unreported
           << " without the event; the orchestrator maps every " << map_period_ms() << " ms)\n"
           << "  first new share of the new epoch, where the handshake held work back: from the kill median "
           << median_of(sum_.first_grant_ms) << " ms, max " << max_of(sum_.first_grant_ms)
           << " ms; from the epoch's first state median " << median_of(sum_.first_grant_after_epoch_ms) << " ms, max "
           << max_of(sum_.first_grant_after_epoch_ms) << " ms (" << sum_.first_grant_ms.size() << " failovers; "
           << sum_.failovers_without_held_work << " granted with no work held back; "
           << sum_.failovers_without_grant << " granted nothing before the next kill)\n"
           << "  processes unlisted in a new active's first state, before its echo (not lost: listed from the echo on): "
           << sum_.unlisted_before_echo << "\n"
           << "  schedules acted on from a lower epoch: " << sum_.lower_epoch_acted << " (refused by the fence: "
           << cluster_->states_refused() << ")\n";
    }
    if (opt_.partition) {
      const auto& e = sum_.epochs_per_failover;
      out_ << "  partition: kills with two instances acted on after the echo: " << sum_.split_actives
           << "; new epochs per kill: median " << median_of(e) << ", max "
           << max_of(e) << "\n";
    }
    out_
         << "  result:                      " << (exit_status(sum_) == 0 ? "PASS" : "FAIL") << std::endl;
    return sum_;
  }

  const soak_options& opt_;
  std::ostream& out_;
  std::mt19937_64 rng_;
  soak_summary sum_;
  std::string config_, pub_, sub_, admin_;
  std::map<std::string, std::uint64_t> node_order_;
  std::unique_ptr<test_support::child_process> rm_;
  std::size_t candidate_count_ = 0;                              // HA: 2, or 3 with --partition
  std::unique_ptr<test_support::child_process> candidates_[3];  // HA
  std::string ha_admins_[3];
  std::unique_ptr<test_support::child_process> proxy_;
  // Partition: forwarder i for candidate i, the last one shared by the candidates alone.
  std::vector<std::string> fwd_pub_, fwd_sub_;
  std::vector<std::unique_ptr<test_support::child_process>> forwarders_;
  std::uint64_t over_order_seen_ = 0;
  std::size_t epochs_checked_ = 0;
  std::optional<grant_watch> grant_watch_;
  bool last_knows_all_ = false;    // the last state's round answered a map echoing its epoch
  bool unlisted_counted_ = false;  // this failover's first state before the echo was counted
  std::unique_ptr<test_support::fake_cluster> cluster_;
  state_queue queue_;
  share_ledger ledger_;
  std::optional<messages::rm_state> last_;
  std::map<std::string, std::uint64_t> last_per_job_;  // processes per job in last_
  int same_in_a_row_ = 0;  // how many schedules before last_ had the same processes per job
  std::vector<soak_job> jobs_;
  int job_count_ = 0;
  int life_ = 0;
  clock_type::time_point started_;
};

}  // namespace

int exit_status(const soak_summary& s) {
  if (!s.ready) return 3;
  if (s.violations() > 0) return 1;
  if (s.time_bound_hit || s.kills_survived < s.kills_asked) return 4;
  return 0;
}

soak_summary run_soak(const soak_options& options, std::ostream& out) {
  soak_run r{options, out};
  return r.run();
}

}  // namespace rmbus::soak
