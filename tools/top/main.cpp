// rmbus-top: the live monitor of a running rmbus. Subscribes to what the RM publishes for monitors
// (rm.state, rm.nodes, rm.cycle, rm.events; never rm.internal.*) through the bus forwarder, folds it into
// a monitor_model and draws render()'s lines full screen with ncurses, or prints them once (--once) for
// scripts. Works against an RM on another host: it only needs the forwarder's subscriber endpoint.
//
//   rmbus-top [--bus-sub tcp://127.0.0.1:5561] [--once] [--timeout-ms 10000] [--width 120]
//             [--refresh-ms 1000] [--log-level warn]
//
// Exit status: 0; 2 for a bad argument (or full screen without a terminal); 3 when --once received no
// complete picture (rm.state and rm.nodes) within --timeout-ms.

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>

#include <CLI/CLI.hpp>
#include <curses.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <zmq.hpp>

#include "bus/log_level.hpp"
#include "bus/subscriber.hpp"
#include "messages/topics.hpp"
#include "tools/top/monitor_model.hpp"
#include "tools/top/render.hpp"

namespace {

using namespace rmbus;
using clock_type = std::chrono::steady_clock;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now().time_since_epoch()).count();
}

// The model shared by the subscriber's thread (writer) and the screen (reader).
struct shared_model {
  std::mutex mutex;
  std::condition_variable changed;
  top::monitor_model model;

  void take(bus::bus_message&& m) {
    const auto t = now_ms();
    std::lock_guard lock{mutex};
    const auto bad = [&](const messages::decode_error& e) { model.on_bad_message(e.message(), t); };
    if (m.topic == messages::topics::rm_state) {
      auto r = messages::decode_rm_state(m.topic, m.body);
      r ? model.on_state(std::move(r.value()), t) : bad(r.error());
    } else if (m.topic == messages::topics::rm_nodes) {
      auto r = messages::decode_rm_nodes(m.topic, m.body);
      r ? model.on_nodes(std::move(r.value()), t) : bad(r.error());
    } else if (m.topic == messages::topics::rm_cycle) {
      auto r = messages::decode_rm_cycle(m.topic, m.body);
      r ? model.on_cycle(std::move(r.value())) : bad(r.error());
    } else if (m.topic == messages::topics::rm_events) {
      auto r = messages::decode_rm_event(m.topic, m.body);
      r ? model.on_event(r.value(), t) : bad(r.error());
    }
    changed.notify_all();
  }
};

top::bus_health health_of(const bus::subscriber_stats& s) {
  return {s.received, s.gaps, s.missing, s.restarts, s.bad_messages};
}

int run_once(shared_model& shared, bus::subscriber& sub, const top::render_options& base, int timeout_ms) {
  std::unique_lock lock{shared.mutex};
  const auto deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
  const auto complete = [&] { return shared.model.state() && shared.model.nodes(); };
  if (!shared.changed.wait_until(lock, deadline, complete)) {
    std::cerr << "rmbus-top: no rm.state and rm.nodes arrived from " << base.endpoint << " within " << timeout_ms
              << " ms (is rmbus running, and is that its --bus-sub endpoint?)\n";
    return 3;
  }
  // The round's rm.cycle follows its rm.state: wait briefly for it, so the timings shown are of that round.
  const auto cycle = shared.model.state()->cycle;
  shared.changed.wait_for(lock, std::chrono::milliseconds(1500), [&] {
    for (const auto& [pool, c] : shared.model.cycles())
      if (c.cycle >= cycle) return true;
    return false;
  });
  shared.model.set_bus(health_of(sub.stats()));
  auto options = base;
  options.now_ms = now_ms();
  for (const auto& line : top::render(shared.model, options)) std::cout << line << '\n';
  return 0;
}

// Full screen until 'q', SIGINT or SIGTERM (blocked in every thread and polled here, so the terminal is
// always restored by endwin()).
int run_screen(shared_model& shared, bus::subscriber& sub, const top::render_options& base, int refresh_ms,
               const sigset_t& stop_signals) {
  if (!::isatty(STDOUT_FILENO) || !::isatty(STDIN_FILENO)) {
    std::cerr << "rmbus-top: the full screen needs a terminal; use --once for scripts\n";
    return 2;
  }
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  timeout(100);
  std::size_t scroll = 0;
  auto next_draw = clock_type::now();
  bool redraw = true;
  for (;;) {
    timespec zero{0, 0};
    if (sigtimedwait(&stop_signals, nullptr, &zero) > 0) break;
    const int key = getch();
    if (key == 'q' || key == 'Q') break;
    const std::size_t page = LINES > 4 ? static_cast<std::size_t>(LINES - 3) : 1;
    if (key == KEY_DOWN) scroll += 1, redraw = true;
    if (key == KEY_UP) scroll = scroll > 0 ? scroll - 1 : 0, redraw = true;
    if (key == KEY_NPAGE) scroll += page, redraw = true;
    if (key == KEY_PPAGE) scroll = scroll > page ? scroll - page : 0, redraw = true;
    if (key == KEY_HOME) scroll = 0, redraw = true;
    if (key == KEY_RESIZE) redraw = true;
    if (!redraw && clock_type::now() < next_draw) continue;
    std::vector<std::string> lines;
    {
      std::lock_guard lock{shared.mutex};
      shared.model.set_bus(health_of(sub.stats()));
      auto options = base;
      options.width = COLS > 0 ? static_cast<std::size_t>(COLS) : base.width;
      options.now_ms = now_ms();
      lines = top::render(shared.model, options);
    }
    // The header (two lines) stays; the rest scrolls.
    const std::size_t fixed = std::min<std::size_t>(2, lines.size());
    const std::size_t body = lines.size() - fixed;
    scroll = std::min(scroll, body > 0 ? body - 1 : 0);
    erase();
    int row = 0;
    for (std::size_t i = 0; i < fixed && row < LINES - 1; ++i) mvaddstr(row++, 0, lines[i].c_str());
    for (std::size_t i = fixed + scroll; i < lines.size() && row < LINES - 1; ++i) mvaddstr(row++, 0, lines[i].c_str());
    mvaddnstr(LINES - 1, 0, "q quits, arrows / PgUp / PgDn / Home scroll", COLS);
    refresh();
    redraw = false;
    next_draw = clock_type::now() + std::chrono::milliseconds(refresh_ms);
  }
  endwin();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string endpoint{bus::default_sub_endpoint};
  bool once = false;
  int timeout_ms = 10000, refresh_ms = 1000;
  std::size_t width = 120;
  std::string log_level = "warn";
  CLI::App app{"rmbus-top: the live monitor of a running rmbus"};
  app.add_option("--bus-sub", endpoint, "the forwarder side subscribers connect to (rmbus's --bus-sub)")->capture_default_str();
  app.add_flag("--once", once, "print the picture once, as plain text, and exit");
  app.add_option("--timeout-ms", timeout_ms, "--once: how long to wait for rm.state and rm.nodes")
      ->capture_default_str()->check(CLI::Range(100, 600000));
  app.add_option("--width", width, "--once: columns")->capture_default_str()->check(CLI::Range(40, 1000));
  app.add_option("--refresh-ms", refresh_ms, "full screen: redraw period")->capture_default_str()->check(CLI::Range(100, 60000));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical, off")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every bad argument exits 2, as the other rmbus tools do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  const auto level = bus::parse_log_level(log_level);
  if (!level) {
    std::cerr << "rmbus-top: --log-level: unknown level '" << log_level << "'\n";
    return 2;
  }
  spdlog::set_level(*level);

  // Blocked before any thread starts, so only the screen loop ever takes them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  zmq::context_t ctx;
  shared_model shared;
  int status = 0;
  {
    bus::subscriber_options so;
    so.name = "rmbus-top";
    so.endpoint = endpoint;
    so.topics = {std::string{messages::topics::rm_state}, std::string{messages::topics::rm_nodes},
                 std::string{messages::topics::rm_cycle}, std::string{messages::topics::rm_events}};
    bus::subscriber_handlers sh;
    sh.on_message = [&shared](bus::bus_message&& m) { shared.take(std::move(m)); };
    sh.on_bad_message = [&shared](const bus::bad_message& b) {
      std::lock_guard lock{shared.mutex};
      shared.model.on_bad_message(b.error.message(), now_ms(), true);
    };
    std::optional<bus::subscriber> sub;
    try {
      sub.emplace(ctx, so, sh);
    } catch (const zmq::error_t& e) {
      std::cerr << "rmbus-top: cannot connect to " << endpoint << ": " << e.what() << '\n';
      return 2;
    }
    sub->start();
    top::render_options options;
    options.width = width;
    options.endpoint = endpoint;
    status = once ? run_once(shared, *sub, options, timeout_ms) : run_screen(shared, *sub, options, refresh_ms, stop_signals);
    sub->stop();
  }
  return status;
}
