#include "tests/support/child_process.hpp"

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <iostream>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmbus::test_support {

namespace {

pid_t spawn(const std::string& path, const std::vector<std::string>& args, int out_fd) {
  std::vector<std::string> all{path};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // A test killed before its destructors run must not leave RMs behind holding ports: the child dies
    // with the thread that forked it (and at once if that is already gone).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // The child: unblock every signal (the parent may have blocked some), redirect output, exec.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (out_fd >= 0) {
      ::dup2(out_fd, 1);
      ::dup2(out_fd, 2);
    }
    ::execv(path.c_str(), argv.data());
    std::perror("execv");
    ::_exit(127);
  }
  return pid;
}

std::optional<int> decode(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return std::nullopt;
}

}  // namespace

child_process::child_process(std::string path, std::vector<std::string> args, std::string log_file) {
  int fd = -1;
  if (!log_file.empty()) fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_ = spawn(path, args, fd);
  if (fd >= 0) ::close(fd);
}

child_process::~child_process() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

void child_process::signal(int sig) {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::optional<int> child_process::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int i = 0; i < 100000; ++i) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = decode(st);
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling waitpid: no event to wait on
  }
  return std::nullopt;
}

bool child_process::running() { return !wait(std::chrono::milliseconds(0)).has_value(); }

run_result run_to_end(const std::string& path, const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  char name[] = "/tmp/rmbus-run-XXXXXX";
  const int fd = ::mkstemp(name);
  run_result r;
  {
    child_process p{path, args, name};
    r.status = p.wait(timeout);
  }
  std::string out;
  char buf[4096];
  ssize_t n;
  ::lseek(fd, 0, SEEK_SET);
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && out.size() < 1'000'000) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  ::unlink(name);
  r.output = std::move(out);
  return r;
}

namespace {

// The kernel's ephemeral range: ports it hands to connect() and bind(:0). A test port taken from it can be
// taken again, before the RM binds it, as the source port of any connection on the machine, or by a client
// connecting to it (TCP's self-connect, which then holds the port the RM was to bind).
std::pair<int, int> ephemeral_range() {
  int low = 32768, high = 60999;
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  if (in >> low >> high && low > 0 && low <= high) return {low, high};
  return {32768, 60999};
}

bool bindable(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

// Test processes running side by side (ctest -j) must not pick the same port: each port chosen is claimed by
// an exclusive flock on a file named after it, held until the claiming process exits (the descriptor is
// left open on purpose; the kernel drops the lock with the process).
bool claim(int port) {
  const std::string dir = "/tmp/rmbus-test-ports";
  ::mkdir(dir.c_str(), 01777);
  const int fd = ::open((dir + "/" + std::to_string(port)).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return true;  // no claim possible: the bind check alone decides
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  return true;
}

}  // namespace

int free_port() {
  const auto [low, high] = ephemeral_range();
  // Below the ephemeral range when there is room for it, else above it.
  const int first = low > 12000 ? 10000 : high + 1;
  const int last = low > 12000 ? low - 1 : 65535;
  if (first > last) throw std::runtime_error("no loopback port range outside the ephemeral ports");
  std::mt19937 pick(std::random_device{}() ^ static_cast<unsigned>(::getpid()));
  std::uniform_int_distribution<int> in_range(first, last);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int port = in_range(pick);
    if (claim(port) && bindable(port)) return port;
  }
  throw std::runtime_error("no free loopback port between " + std::to_string(first) + " and " + std::to_string(last));
}

// The first and the last lines of an RM log: how it started (bindings, refusals) and what it did last.
void print_log_ends(const std::string& path, std::size_t first, std::size_t last) {
  std::ifstream in(path);
  std::vector<std::string> head;
  std::deque<std::string> tail;
  std::size_t skipped = 0;
  for (std::string line; std::getline(in, line);) {
    if (head.size() < first) {
      head.push_back(std::move(line));
      continue;
    }
    tail.push_back(std::move(line));
    if (tail.size() > last) {
      tail.pop_front();
      ++skipped;
    }
  }
  std::cerr << "rm_fixture: " << path << ":\n";
  for (const auto& line : head) std::cerr << "  " << line << '\n';
  if (skipped > 0) std::cerr << "  [" << skipped << " lines]\n";
  for (const auto& line : tail) std::cerr << "  " << line << '\n';
}

std::string loopback(int port) { return "tcp://127.0.0.1:" + std::to_string(port); }

}  // namespace rmbus::test_support
