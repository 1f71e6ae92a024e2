#include "tests/support/child_process.hpp"

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(s);
    throw std::runtime_error("cannot bind a loopback port");
  }
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

std::string loopback(int port) { return "tcp://127.0.0.1:" + std::to_string(port); }

}  // namespace rmbus::test_support
