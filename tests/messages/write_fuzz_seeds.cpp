// Writes the seeds of fuzz_internal_decoders: one body per internal message, every field set
// (internal_samples.hpp), encoded by our own codecs and prefixed with the byte that picks its topic. Run it
// once when a message gains a field: `write_fuzz_seeds tests/messages/fuzz_seeds_internal`.
#include <cstdio>
#include <fstream>
#include <string>

#include "messages/internal/payload.hpp"
#include "tests/messages/internal_fuzz_topics.hpp"
#include "tests/messages/internal_samples.hpp"

using namespace rmbus::messages;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const envelope env{schema_version, 7, 1'700'000'000'000, "rm-1:intake"};
  const payload samples[] = {samples::full_node_ops(),     samples::full_node_changes(),
                             samples::full_node_snapshot(), node_sync_request{"rm-2:scheduler", "alpha"},
                             samples::full_work_slice(),    samples::full_round_start(),
                             samples::full_pool_plan(),     round_done{12},
                             samples::full_admin_query(),   samples::full_admin_answer(),
                             samples::full_vary_request(),  samples::full_recovered_nodes(),
                             reconfigure_request{},         samples::full_machines_forgotten(),
                             seed_request{"alpha", 1'700'000'000'123}, samples::full_rm_state(),
                             work_sync_request{"alpha", 12}, plan_sync_request{"alpha", 3},
                             samples::full_admin_query()};
  static_assert(std::size(samples) == fuzz::internal_topics.size());
  for (std::size_t i = 0; i < std::size(samples); ++i) {
    std::string name{fuzz::internal_topics[i]};
    name = name.substr(name.find("internal.") + 9);
    std::ofstream out(dir + "/" + name + ".bin", std::ios::binary);
    out << static_cast<char>(i) << encode_payload(env, samples[i]);
    if (!out) {
      std::fprintf(stderr, "cannot write %s/%s.bin\n", dir.c_str(), name.c_str());
      return 1;
    }
  }
  return 0;
}
