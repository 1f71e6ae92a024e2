#pragma once
// Test helpers for the bus tests: an inbox that subscriber callbacks fill and tests wait on with deadlines,
// a child process that is always reaped, and a free loopback port. Header-only, test code only.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bus/bus_message.hpp"
#include "bus/subscriber.hpp"

namespace rmbus::bus::testing {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// Everything a subscriber delivered, in order, behind a mutex; tests wait for a condition with a deadline.
class inbox {
 public:
  subscriber_handlers handlers() {
    return {[this](bus_message&& m) {
              std::lock_guard lock{mutex_};
              messages_.push_back(std::move(m));
              changed_.notify_all();
            },
            [this](const bad_message& b) {
              std::lock_guard lock{mutex_};
              bad_.push_back(b);
              changed_.notify_all();
            },
            {}};
  }

  // Waits until pred(messages, bad) holds or `timeout` passes; returns whether it holds.
  bool wait_for(
      const std::function<bool(const std::vector<bus_message>&, const std::vector<bad_message>&)>& pred,
      std::chrono::milliseconds timeout) {
    std::unique_lock lock{mutex_};
    return changed_.wait_for(lock, timeout, [&] { return pred(messages_, bad_); });
  }

  bool wait_count(std::string_view topic, std::size_t n, std::chrono::milliseconds timeout) {
    return wait_for([&](const auto& msgs, const auto&) { return count_in(msgs, topic) >= n; }, timeout);
  }

  std::vector<bus_message> on_topic(std::string_view topic) const {
    std::lock_guard lock{mutex_};
    std::vector<bus_message> out;
    for (const auto& m : messages_)
      if (m.topic == topic) out.push_back(m);
    return out;
  }

  std::vector<bad_message> bad() const {
    std::lock_guard lock{mutex_};
    return bad_;
  }

  static std::size_t count_in(const std::vector<bus_message>& msgs, std::string_view topic) {
    std::size_t n = 0;
    for (const auto& m : msgs) n += m.topic == topic ? 1 : 0;
    return n;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bus_message> messages_;
  std::vector<bad_message> bad_;
};

// Repeats `send` until `arrived(timeout)` reports success: the way to get past the slow-joiner window
// without sleeping. Bounded in attempts and in time.
inline bool send_until_arrived(const std::function<void()>& send,
                               const std::function<bool(std::chrono::milliseconds)>& arrived,
                               std::chrono::milliseconds total = 20s) {
  const auto deadline = steady::now() + total;
  for (int attempt = 0; attempt < 2000 && steady::now() < deadline; ++attempt) {
    send();
    if (arrived(20ms)) return true;
  }
  return false;
}

// A forked and exec'd child that is killed and reaped when the object goes, whatever happened in between.
class child_process {
 public:
  explicit child_process(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::execv(argv[0], argv.data());
      ::_exit(127);  // exec failed
    }
  }
  ~child_process() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  void send_signal(int sig) { ::kill(pid_, sig); }

  // The exit code (128 + signal number if killed by a signal) once the child has ended, or nullopt if it is
  // still running after `timeout`.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
    if (exit_code_) return exit_code_;
    const auto deadline = steady::now() + timeout;
    while (true) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return exit_code_;
      }
      if (r < 0 || steady::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(10ms);  // polling a child's state; bounded by the deadline
    }
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picked it for a socket bound to port 0).
// Another process may take it before we bind it again: callers retry on failure.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace rmbus::bus::testing
