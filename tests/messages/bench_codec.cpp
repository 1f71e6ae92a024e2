// Prints encode/decode figures for the two big messages (not a test: timings are never asserted on this
// shared machine). Build in Release for meaningful numbers:
//   cmake --build <build> --target bench_messages_codec && <build>/tests/messages/bench_messages_codec
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "messages/topics.hpp"
#include "samples.hpp"

using namespace rmbus::messages;
using clock_type = std::chrono::steady_clock;

namespace {

template <class Fn>
double median_ms(Fn&& fn) {
  double best[5];
  for (auto& b : best) {
    const auto t0 = clock_type::now();
    fn();
    b = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  }
  std::sort(std::begin(best), std::end(best));
  return best[2];
}

}  // namespace

int main() {
  workmap m;
  for (int i = 0; i < 10'000; ++i) m.work.push_back(samples::job_item("job-" + std::to_string(i), 1'000 + i));
  const auto env = samples::env();
  const auto wm_body = encode(env, m);
  std::size_t sink = 0;
  const double wm_enc = median_ms([&] { sink += encode(env, m).size(); });
  const double wm_dec = median_ms([&] { sink += decode_workmap(topics::workmap, wm_body).value().work.size(); });

  rm_state s;
  for (int i = 0; i < 10'000; ++i) {
    job_schedule j{"job-" + std::to_string(i), job_status::scheduled, "", 30720, {}, "user", "normal", 4, 8, 4, "", ""};
    for (int k = 0; k < 4; ++k)
      j.shares.push_back(share_schedule{"s-" + std::to_string(i * 4 + k), "n" + std::to_string(k), 2,
                                        share_status::running, {}});
    s.jobs.push_back(std::move(j));
  }
  const auto st_body = encode(env, s);
  const double st_enc = median_ms([&] { sink += encode(env, s).size(); });
  const double st_dec = median_ms([&] { sink += decode_rm_state(topics::rm_state, st_body).value().jobs.size(); });

  std::printf("workmap  10,000 items x 2 processes: %zu bytes, encode %.2f ms, decode %.2f ms (median of 5)\n",
              wm_body.size(), wm_enc, wm_dec);
  std::printf("rm.state 10,000 jobs x 4 shares:     %zu bytes, encode %.2f ms, decode %.2f ms (median of 5)\n",
              st_body.size(), st_enc, st_dec);
  return sink == 0;  // keeps the work observable
}
