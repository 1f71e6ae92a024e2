#include "actors/process_stop.hpp"

#include <unistd.h>

namespace rmbus::actors {

void request_stop(int status) {
  sigval v{};
  v.sival_int = status;
  ::sigqueue(::getpid(), SIGTERM, v);
}

int stop_status(const siginfo_t& info) {
  if (info.si_code != SI_QUEUE || info.si_pid != ::getpid()) return 0;
  return info.si_value.sival_int;
}

}  // namespace rmbus::actors
