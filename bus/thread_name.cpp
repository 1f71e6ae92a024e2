#include "bus/thread_name.hpp"

#include <pthread.h>

#include <string>

namespace rmbus::bus {

void name_this_thread(std::string_view name) {
  const std::string cut{name.substr(0, 15)};  // the kernel's limit, without the terminating zero
  pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace rmbus::bus
