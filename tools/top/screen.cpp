#include "tools/top/screen.hpp"

#include <curses.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace rmbus::top {

namespace {

// ncurses set up for the lifetime of the object; the destructor restores the terminal on every way out.
class terminal_session {
 public:
  terminal_session() : screen_(newterm(nullptr, stdout, stdin)) {
    if (screen_ == nullptr) return;
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    // getch waits at most this long, so stop signals and the refresh period are noticed promptly.
    timeout(100);
  }
  ~terminal_session() {
    if (screen_ == nullptr) return;
    endwin();
    delscreen(screen_);
  }
  terminal_session(const terminal_session&) = delete;
  terminal_session& operator=(const terminal_session&) = delete;

  bool ok() const { return screen_ != nullptr; }

 private:
  SCREEN* screen_;
};

bool stop_requested(const sigset_t& stop_signals) {
  timespec no_wait{0, 0};
  return sigtimedwait(&stop_signals, nullptr, &no_wait) > 0;
}

std::optional<scroll_step> scroll_key(int key) {
  switch (key) {
    case KEY_UP:
      return scroll_step::line_up;
    case KEY_DOWN:
      return scroll_step::line_down;
    case KEY_PPAGE:
      return scroll_step::page_up;
    case KEY_NPAGE:
      return scroll_step::page_down;
    case KEY_HOME:
      return scroll_step::first;
    case KEY_END:
      return scroll_step::last;
    default:
      return std::nullopt;
  }
}

}  // namespace

int run_screen(const std::function<screen(const render_options&)>& draw, const render_options& base,
               std::chrono::milliseconds refresh_period, const sigset_t& stop_signals) {
  if (!::isatty(STDOUT_FILENO) || !::isatty(STDIN_FILENO)) {
    std::cerr << "rmbus-top: the full screen needs a terminal on stdin and stdout; use --once for scripts\n";
    return 2;
  }
  terminal_session session;
  if (!session.ok()) {
    std::cerr << "rmbus-top: cannot set up the terminal (TERM="
              << (std::getenv("TERM") ? std::getenv("TERM") : "") << "); use --once\n";
    return 2;
  }
  using clock = std::chrono::steady_clock;
  std::size_t offset = 0;
  std::size_t page = 1;
  std::size_t jobs_total = 0;
  auto next_draw = clock::now();
  for (;;) {
    if (stop_requested(stop_signals)) break;
    const int key = getch();
    if (key == 'q' || key == 'Q') break;
    bool now = key == KEY_RESIZE;
    if (const auto step = scroll_key(key)) {
      offset = scroll_jobs(offset, *step, page, jobs_total);
      now = true;
    }
    if (!now && clock::now() < next_draw) continue;

    const int rows = LINES, cols = COLS;
    auto options = base;
    options.width = cols > 0 ? static_cast<std::size_t>(cols) : base.width;
    // The last row is the key help.
    options.height = rows > 1 ? static_cast<std::size_t>(rows - 1) : 1;
    options.jobs_offset = offset;
    const auto picture = draw(options);
    offset = picture.jobs_first;
    page = std::max<std::size_t>(1, picture.jobs_shown);
    jobs_total = picture.jobs_total;

    erase();
    int row = 0;
    for (const auto& line : picture.lines) {
      if (row >= rows - 1) break;
      mvaddnstr(row++, 0, line.c_str(), cols);
    }
    if (rows > 1) {
      attron(A_REVERSE);
      // One column short of the edge: writing the bottom-right cell would scroll some terminals.
      mvaddnstr(rows - 1, 0, " q quit   Up/Down PgUp/PgDn Home/End scroll the jobs ",
                cols > 1 ? cols - 1 : 0);
      attroff(A_REVERSE);
    }
    refresh();
    next_draw = clock::now() + refresh_period;
  }
  return 0;
}

}  // namespace rmbus::top
