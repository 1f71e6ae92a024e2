#include "tools/load/rm_process.hpp"

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmbus::load {

bool parse_stat_ticks(std::string_view stat, std::uint64_t& utime, std::uint64_t& stime) {
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos) return false;
  std::istringstream in{std::string{stat.substr(close + 1)}};
  // After the name: state (field 3), then fields 4..; utime and stime are fields 14 and 15.
  std::string field;
  for (int i = 3; i <= 13; ++i)
    if (!(in >> field)) return false;
  return static_cast<bool>(in >> utime >> stime);
}

std::uint64_t parse_status_kb(std::string_view status, std::string_view key) {
  std::size_t at = 0;
  while (at < status.size()) {
    auto end = status.find('\n', at);
    if (end == std::string_view::npos) end = status.size();
    const auto line = status.substr(at, end - at);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      std::istringstream in{std::string{line.substr(key.size() + 1)}};
      std::uint64_t kb = 0;
      in >> kb;
      return kb;
    }
    at = end + 1;
  }
  return 0;
}

rm_process::rm_process(const std::string& exe, const std::vector<std::string>& args, const std::string& log_path) {
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
}

rm_process::~rm_process() { stop(); }

bool rm_process::running() const {
  if (pid_ <= 0) return false;
  int status = 0;
  return ::waitpid(pid_, &status, WNOHANG) == 0;
}

proc_sample rm_process::sample() const {
  proc_sample s;
  if (pid_ <= 0) return s;
  const auto dir = "/proc/" + std::to_string(pid_) + "/";
  std::ifstream stat(dir + "stat"), status(dir + "status");
  std::stringstream a, b;
  a << stat.rdbuf();
  b << status.rdbuf();
  std::uint64_t ut = 0, st = 0;
  if (parse_stat_ticks(a.str(), ut, st)) s.cpu_s = static_cast<double>(ut + st) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  s.rss_kb = parse_status_kb(b.str(), "VmRSS");
  s.peak_rss_kb = parse_status_kb(b.str(), "VmHWM");
  return s;
}

void rm_process::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace rmbus::load
