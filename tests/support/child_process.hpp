#pragma once
// Real processes for end-to-end tests: start a built executable with fork/exec, signal it, wait for it with a
// deadline, and never leave it behind (the destructor SIGKILLs and reaps it). Also picks free loopback ports.
//
// Thread-safety: one owner per object.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rmbus::test_support {

class child_process {
 public:
  // Starts `path` with `args` (argv[0] is `path`); stdout/stderr go to `log_file` when given (appended).
  child_process(std::string path, std::vector<std::string> args, std::string log_file = {});
  ~child_process();  // SIGKILL + reap if still running
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig);
  // The exit status (WEXITSTATUS, or 128 + signal) once it exited within `timeout`; nullopt otherwise.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Runs `path args...` to completion (bounded by `timeout`; killed after it), capturing stdout and stderr.
struct run_result {
  std::optional<int> status;  // nullopt: timed out (and killed)
  std::string output;
};
run_result run_to_end(const std::string& path, const std::vector<std::string>& args, std::chrono::milliseconds timeout);

// A TCP port on 127.0.0.1 that was free a moment ago, outside the kernel's ephemeral range and claimed for
// this test process alone (see child_process.cpp).
int free_port();
std::string loopback(int port);

// Prints to stderr the first `first` and the last `last` lines of a log file (how a child process started and
// what it did last), for a failed test to be read from ctest's output.
void print_log_ends(const std::string& path, std::size_t first, std::size_t last);  // "tcp://127.0.0.1:<port>"

}  // namespace rmbus::test_support
