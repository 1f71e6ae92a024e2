// rmbus-top's full screen as a user sees it: the real rmbus (the e2e fixture) with a fake cluster, and the
// real rmbus-top in a tmux session of 120 x 40, its screen read with `tmux capture-pane -p`. What it must
// show: the pools, the jobs, the refused work with its reason; after a resize to a narrow window, long
// reasons and notes wrapped onto the next lines rather than cut; `q` quits with status 0.
// A second case tells an idle RM (NOT SCHEDULING and why) from a hung one (STALE) on the same screen.
//
// tmux runs on a private socket (its own server, no user configuration) and is killed at the end. Every wait
// is bounded: the screen is read every 100 ms until it shows what is expected or the deadline passes.
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <regex>
#include <sstream>

#include "tests/e2e/file_waits.hpp"
#include "tests/e2e/rm_fixture.hpp"

using namespace std::chrono_literals;
using rmbus::e2e::eventually;
using rmbus::e2e::layout;
using rmbus::e2e::rm_fixture;
namespace ts = rmbus::test_support;
namespace msg = rmbus::messages;

namespace {

constexpr auto deadline = 60s;

// One tmux server on a private socket; killed (with rmbus-top in it) when the test ends.
class tmux_session {
 public:
  tmux_session() {
    char dir[] = "/tmp/rmbus-tmux-XXXXXX";  // a short path: a socket's path is limited to ~100 bytes
    REQUIRE(::mkdtemp(dir) != nullptr);
    dir_ = dir;
    socket_ = dir_ + "/sock";
    ::unsetenv("TMUX");  // a test run from inside tmux still starts its own server
  }
  ~tmux_session() {
    ts::run_to_end(RMBUS_TMUX, {"-S", socket_, "kill-server"}, 10s);
    std::remove(socket_.c_str());
    ::rmdir(dir_.c_str());
  }
  tmux_session(const tmux_session&) = delete;
  tmux_session& operator=(const tmux_session&) = delete;

  // Runs one tmux command against this server; its output (REQUIREs that it succeeded).
  std::string run(std::vector<std::string> args) {
    args.insert(args.begin(), {"-S", socket_, "-f", "/dev/null"});
    const auto r = ts::run_to_end(RMBUS_TMUX, args, 10s);
    INFO("tmux " << args.back() << ": " << r.output);
    REQUIRE(r.status == std::optional<int>{0});
    return r.output;
  }
  std::string screen() { return run({"capture-pane", "-p", "-t", "top"}); }

 private:
  std::string dir_, socket_;
};

// The screen's lines joined with single spaces: a sentence wrapped over several lines reads whole.
std::string flat(const std::string& screen) {
  std::string joined;
  std::istringstream in(screen);
  for (std::string line; std::getline(in, line);) joined += line + " ";
  return std::regex_replace(joined, std::regex{" +"}, " ");
}

std::size_t widest_line(const std::string& screen) {
  std::size_t widest = 0;
  std::istringstream in(screen);
  for (std::string line; std::getline(in, line);) widest = std::max(widest, line.size());
  return widest;
}

}  // namespace

TEST_CASE("rmbus-top in tmux: pools, jobs and refused work on screen, a narrow window wraps, q quits") {
  INFO("tmux: " << RMBUS_TMUX);
  REQUIRE_FALSE(std::string(RMBUS_TMUX).empty());  // tools/install-deps.sh installs Debian's tmux

  rm_fixture f{layout::single};
  auto& c = f.cluster();
  c.start();
  c.submit(rmbus::e2e::job("alice-1", "alice", "normal", 1024));
  c.submit(rmbus::e2e::job("dave-1", "dave", "no-such-class", 1024, 1));
  c.submit(rmbus::e2e::job("huge-1", "erin", "normal", 16384, 1));  // order 16 on 8 GB nodes: never fits
  REQUIRE(c.wait_state(
      [](const msg::rm_state& s) {
        const auto* d = ts::find_job(s, "dave-1");
        const auto* h = ts::find_job(s, "huge-1");
        return ts::active_shares(s, "alice-1") > 0 && d != nullptr && d->status == msg::job_status::refused &&
               h != nullptr && !h->reason.empty();
      },
      deadline));

  tmux_session tmux;
  // A session with a shell first, kept after its program ends, then rmbus-top in its place, run by a shell
  // that writes its exit status to a file; logs to a file, as docs/top.md advises (they would tear the
  // screen).
  tmux.run({"new-session", "-d", "-s", "top", "-x", "120", "-y", "40"});
  tmux.run({"set-option", "-t", "top", "remain-on-exit", "on"});
  const std::string status_file = f.dir() + "/top.status";
  tmux.run({"respawn-pane", "-k", "-t", "top",
            "'" + std::string(RMBUS_TOP_BIN) + "' --bus-sub " + f.bus_sub() + " --refresh-ms 200 2>'" +
                f.dir() + "/top.log'; echo $? >'" + status_file + "'"});

  {  // the picture at 120 x 40
    std::string screen;
    const bool shown = eventually(
        [&] {
          screen = tmux.screen();
          // rm.nodes comes after rm.state in a round: a screen drawn between them waits for the pools' rows.
          return screen.find("REFUSED: work the RM will not run as submitted, and why") !=
                     std::string::npos &&
                 screen.find("alice-1 ") != std::string::npos && screen.find("\nalpha ") != std::string::npos &&
                 screen.find("\nbeta ") != std::string::npos;
        },
        deadline);
    INFO(screen);
    REQUIRE(shown);
    CHECK(widest_line(screen) <= 120);
    // The header: the round, the refused count, and the bus endpoint it reads.
    CHECK(std::regex_search(screen, std::regex{"^rmbus-top +cycle [0-9]+ .*REFUSED 1 "}));
    // One row per top-level pool of the fixture: alpha (4 nodes of 8 quanta, all up, some held by alice) and
    // beta (2, all free): nodes, up, quanta, free, missing, down, off.
    CHECK(std::regex_search(screen, std::regex{"\nalpha +4 +4 +32 +[0-9]+ +0 +0 +0 "}));
    CHECK(std::regex_search(screen, std::regex{"\nbeta +2 +2 +16 +16 +0 +0 +0 "}));
    // The jobs: alice's scheduled with 1 GB processes, erin's pending; dave's is not among them.
    CHECK(std::regex_search(screen, std::regex{"\nalice-1 +alice +normal +scheduled +1024 +[1-9]"}));
    CHECK(std::regex_search(screen, std::regex{"\nhuge-1 +erin +normal +pending "}));
    CHECK_FALSE(std::regex_search(screen, std::regex{"\ndave-1 "}));
    // The refused job with the RM's reason.
    CHECK(screen.find("\n  dave-1 (user dave): Cannot find class no-such-class for the work\n") !=
          std::string::npos);
    // The keys are listed at the bottom.
    CHECK(screen.find("q quit") != std::string::npos);
  }

  {  // a resize to 60 columns wraps the reasons instead of cutting them; q quits
    tmux.run({"resize-window", "-t", "top", "-x", "60", "-y", "40"});
    const std::string never_fits =
        "no machine of order 16 (16 GB) in pool alpha: larger than every machine there (the largest is "
        "order 8, 8 GB); it runs only if a larger machine joins";
    std::string screen;
    const bool wrapped = eventually(
        [&] {
          screen = tmux.screen();
          const auto text = flat(screen);
          return widest_line(screen) <= 60 &&
                 text.find("dave-1 (user dave): Cannot find class no-such-class for the work") !=
                     std::string::npos &&
                 text.find(never_fits) != std::string::npos;
        },
        deadline);
    INFO(screen);
    CHECK(wrapped);
    // The refusal's reason does not fit in 60 columns: its end is on the next line, indented.
    CHECK(std::regex_search(screen,
                            std::regex{"\n  dave-1 \\(user dave\\): Cannot find class[^\n]*\n +[^\n]*the "
                                       "work\n"}));

    tmux.run({"send-keys", "-t", "top", "q"});
    // Its exit status, as the shell that ran it in the pane wrote it (tmux 3.3 may mark the pane dead and
    // leave the process unreaped, so #{pane_dead_status} is not dependable).
    std::string status;
    const bool quit = eventually(
        [&] {
          status = rmbus::e2e::read_all(status_file);
          return !status.empty() && status.back() == '\n';
        },
        10s);
    INFO("rmbus-top's exit status: " << status);
    INFO("rmbus-top's stderr: " << rmbus::e2e::read_all(f.dir() + "/top.log"));
    REQUIRE(quit);
    CHECK(status == "0\n");
  }
}

// Issue 51: an idle RM read as a dead one. Started with no orchestrator, the screen says NOT SCHEDULING and
// why (no work map since start); with maps, the rounds; when the maps stop, NOT SCHEDULING again with how
// long and no STALE; and when the RM itself stops answering (SIGSTOP: a hung process), STALE.
TEST_CASE("rmbus-top in tmux tells an idle RM from a hung one") {
  REQUIRE_FALSE(std::string(RMBUS_TOP_BIN).empty());
  REQUIRE_FALSE(std::string(RMBUS_TMUX).empty());
  rm_fixture f{layout::single};
  tmux_session tmux;
  tmux.run({"new-session", "-d", "-s", "top", "-x", "120", "-y", "40"});
  tmux.run({"respawn-pane", "-k", "-t", "top",
            "'" + std::string(RMBUS_TOP_BIN) + "' --bus-sub " + f.bus_sub() + " --refresh-ms 200 2>'" +
                f.dir() + "/top.log'"});
  std::string screen;
  const auto shows = [&](const std::function<bool(const std::string&)>& what,
                         std::chrono::milliseconds within) {
    return eventually(
        [&] {
          screen = tmux.screen();
          return what(flat(screen));
        },
        within);
  };
  const auto has = [](const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
  };

  {  // no orchestrator at all
    const bool idle = shows(
        [&](const std::string& t) {
          return has(t, "NOT SCHEDULING") && has(t, "scheduling idle: no work map for") &&
                 has(t, "(none since rmbus started)");
        },
        deadline);
    INFO(screen);
    REQUIRE(idle);
    CHECK_FALSE(has(screen, "STALE"));
  }

  auto& c = f.cluster();
  c.start();
  c.submit(rmbus::e2e::job("alice-1", "alice", "normal", 1024));
  {  // maps come: the rounds show, and the reason is gone
    const bool scheduling = shows(
        [&](const std::string& t) {
          return has(t, "alice-1 ") && has(t, " cycle ") && !has(t, "NOT SCHEDULING");
        },
        deadline);
    INFO(screen);
    REQUIRE(scheduling);
  }

  c.pause_maps(true);
  // Maps stop: idle, with the last round, and not stale (after 2 configured periods of 10 s, a report
  // within 5 s).
  {
    const bool idle = shows(
        [&](const std::string& t) {
          return has(t, "NOT SCHEDULING") && has(t, "idle: no work map for") &&
                 has(t, "(the last round was ") && !has(t, "STALE");
        },
        deadline);
    INFO(screen);
    REQUIRE(idle);
  }

  f.kill_rm(SIGSTOP);
  {  // hung: its word stops coming, and after 3 report periods (5 s each) the screen says STALE
    const bool stale =
        shows([&](const std::string& t) { return has(t, "STALE: the RM's last word came "); }, deadline);
    INFO(screen);
    CHECK(stale);
  }
  f.kill_rm(SIGCONT);
}
