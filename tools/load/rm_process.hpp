#pragma once
// One rmbus process started by rmbus-load: fork/exec with its output to a log file, its CPU time and memory
// read from /proc, and killed (SIGTERM, then SIGKILL) when the handle goes, so no benchmark leaves an RM
// behind. The child also dies with rmbus-load itself (PR_SET_PDEATHSIG).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace rmbus::load {

// What /proc says of a process at one moment.
struct proc_sample {
  double cpu_s = 0;             // user + system time so far, seconds
  std::uint64_t rss_kb = 0;     // VmRSS
  std::uint64_t peak_rss_kb = 0;  // VmHWM
};

// Parses the utime and stime fields of /proc/<pid>/stat (ticks; the command name may hold spaces and
// parentheses, so fields are counted after its last ')'). Returns false when the text has too few fields.
bool parse_stat_ticks(std::string_view stat, std::uint64_t& utime, std::uint64_t& stime);
// Reads "Key:   123 kB" from /proc/<pid>/status text; 0 when absent.
std::uint64_t parse_status_kb(std::string_view status, std::string_view key);

class rm_process {
 public:
  rm_process(const std::string& exe, const std::vector<std::string>& args, const std::string& log_path);
  ~rm_process();
  rm_process(const rm_process&) = delete;
  rm_process& operator=(const rm_process&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const;
  proc_sample sample() const;
  void stop();  // SIGTERM, up to 5 s, then SIGKILL; idempotent

 private:
  pid_t pid_ = -1;
};

}  // namespace rmbus::load
