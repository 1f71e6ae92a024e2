// What a reconfiguration changed, in the words the RM logs and rmbus-admin prints: read from two native
// configurations, as the admin actor compares the running one with the reloaded one.
#include <catch2/catch.hpp>

#include "config/config_changes.hpp"
#include "config/loader.hpp"

using rmbus::config::describe_changes;
using rmbus::config::parse_native;

namespace {

std::string site(const std::string& weight, const std::string& nodes, const std::string& extra = {}) {
  return "[[nodepool]]\nname = \"alpha\"\nnodes = [" + nodes +
         "]\n\n[[class]]\nname = \"normal\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"alpha\"\nweight = " +
         weight + "\ndefault = true\n" + extra;
}

}  // namespace

TEST_CASE("the same configuration read again changes nothing") {
  const auto a = parse_native(site("100", "\"a1\", \"a2\""), "a.toml");
  CHECK(describe_changes(a, a).empty());
}

TEST_CASE("classes, weights, pools and nodes that changed are named") {
  const auto a = parse_native(site("100", "\"a1\", \"a2\""), "a.toml");
  const auto b = parse_native(
      site("50", "\"a1\", \"a3\"",
           "\n[[class]]\nname = \"batch\"\npolicy = \"FAIR_SHARE\"\nnodepool = \"beta\"\nweight = 10\n"
           "\n[[nodepool]]\nname = \"beta\"\nnodes = [\"b1\"]\n"),
      "b.toml");
  const auto changes = describe_changes(a, b);
  CHECK(changes == std::vector<std::string>{"class 'batch' added (FAIR_SHARE, nodepool beta, weight 10)",
                                            "class 'normal': weight 100 -> 50",
                                            "nodepool 'alpha': nodes +a3 -a2",
                                            "nodepool 'beta' added (1 nodes)"});
  // And back: what was added is removed.
  const auto back = describe_changes(b, a);
  CHECK(std::find(back.begin(), back.end(), "class 'batch' removed") != back.end());
  CHECK(std::find(back.begin(), back.end(), "nodepool 'beta' removed") != back.end());
}

TEST_CASE("changes to the ha table are named and said not to apply until a restart, and nothing else is reported for them") {
  const auto a = parse_native(site("100", "\"a1\"", "\n[ha]\nenabled = true\nrank = 0\n"), "a.toml");
  const auto b = parse_native(site("100", "\"a1\"", "\n[ha]\nenabled = true\nrank = 1\ntakeover_ms = 2000\n"), "b.toml");
  CHECK(describe_changes(a, b) ==
        std::vector<std::string>{"ha: rank 0 -> 1, takeover_ms 1000 -> 2000 (not applied: [ha] takes effect when the "
                                 "process restarts)"});
}
