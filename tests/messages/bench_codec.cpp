// Prints encode/decode figures for the two big messages and for heartbeats (not a test: timings are never
// asserted on this shared machine). Build in Release for meaningful numbers:
//   cmake --build <build> --target bench_messages_codec && <build>/tests/messages/bench_messages_codec
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

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

  // 100,000 heartbeats of distinct nodes, as agents write them: decode_heartbeat (its one pass) against the
  // full decode through the object tree, in the same run.
  std::vector<std::string> hb_bodies;
  for (int i = 0; i < 100'000; ++i) {
    const auto n = std::to_string(i);
    heartbeat hb{"node" + n, "10.0." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256), 65536, 98304,
                 false, 32};
    hb_bodies.push_back(encode(envelope{1, 1'000'000u + i, 1'700'000'000'000u, "agent.node" + n}, hb));
  }
  const double hb_one_pass = median_ms([&] {
    for (const auto& b : hb_bodies) sink += decode_heartbeat(topics::heartbeat, b).value().memory_mb;
  });
  const double hb_tree = median_ms([&] {
    for (const auto& b : hb_bodies)
      sink += detail::decode_heartbeat_tree(topics::heartbeat, b, {}, nullptr).value().memory_mb;
  });

  std::printf("workmap  10,000 items x 2 processes: %zu bytes, encode %.2f ms, decode %.2f ms (median of 5)\n",
              wm_body.size(), wm_enc, wm_dec);
  std::printf("rm.state 10,000 jobs x 4 shares:     %zu bytes, encode %.2f ms, decode %.2f ms (median of 5)\n",
              st_body.size(), st_enc, st_dec);
  std::printf("heartbeat x 100,000 (%zu bytes each): decode_heartbeat %.1f ns each, the full decode %.1f ns each "
              "(%.2f of it; median of 5)\n",
              hb_bodies.front().size(), hb_one_pass * 1e6 / 100'000, hb_tree * 1e6 / 100'000, hb_one_pass / hb_tree);
  return sink == 0;  // keeps the work observable
}
