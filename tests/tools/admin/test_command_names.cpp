// rmbus-admin's command names: DUCC's spellings are accepted, a misspelt one gets its nearest name, and the
// global options' values are never taken for the command.
#include <catch2/catch.hpp>

#include "tools/admin/command_names.hpp"

using namespace rmbus::tools::admin;

TEST_CASE("DUCC's names and the wire's are commands too") {
  for (const char* w :
       {"vary_off", "vary_on", "qload", "qoccupancy", "vary-off", "status", "whatif", "explain", "handover", "drain",
        "undrain", "jobs", "users"})
    CHECK_FALSE(unknown_command_message(w));
}

TEST_CASE("a misspelt command gets the nearest name and the list") {
  const auto m = unknown_command_message("qocupancy");
  REQUIRE(m);
  CHECK(*m ==
        "unknown command 'qocupancy'; did you mean 'qoccupancy'? (commands: status, qload, qoccupancy, "
        "vary-off, vary-on, explain, whatif, reconfigure, handover, drain, undrain, jobs, users)");
  // Near an alias: the command the alias names.
  const auto v = unknown_command_message("vary_of");
  REQUIRE(v);
  CHECK(v->find("did you mean 'vary-off'?") != std::string::npos);
  // Nothing near: no suggestion, only the list.
  const auto far = unknown_command_message("frobnicate");
  REQUIRE(far);
  CHECK(far->find("did you mean") == std::string::npos);
  CHECK(far->find("(commands: status,") != std::string::npos);
}

TEST_CASE("the command word skips the global options and their values") {
  CHECK(subcommand_word({"--admin", "tcp://h:1", "--json", "qload"}) == std::optional<std::string>{"qload"});
  CHECK(subcommand_word({"--admin=tcp://h:1", "status"}) == std::optional<std::string>{"status"});
  CHECK(subcommand_word({"--config", "rm.toml", "--timeout-ms", "500", "vary_off", "a1"}) ==
        std::optional<std::string>{"vary_off"});
  CHECK_FALSE(subcommand_word({"--json"}));
  CHECK_FALSE(subcommand_word({}));
}

TEST_CASE("a misspelt state gets the nearest one and the list") {
  CHECK_FALSE(unknown_value_message("--state", "pending", job_states()));
  CHECK(unknown_value_message("--state", "pendng", job_states()) ==
        std::optional<std::string>{"--state: 'pendng' is not one of scheduled, pending, refused; did you mean 'pending'?"});
  CHECK(unknown_value_message("--state", "varied-off", node_states())->find("did you mean 'varied_off'?") !=
        std::string::npos);
  CHECK(unknown_value_message("--state", "zzz", job_states())->find("did you mean") == std::string::npos);
}

TEST_CASE("global options after the command do not hide it") {
  CHECK(subcommand_word({"whatif", "--user", "bob", "--json"}) == std::optional<std::string>{"whatif"});
  CHECK(subcommand_word({"jobs", "--user", "bob"}) == std::optional<std::string>{"jobs"});
}
