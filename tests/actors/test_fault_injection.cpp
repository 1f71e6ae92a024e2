// --inject-fault's spec (tests only): one round, ranges and lists, each refused with the reason when wrong.
#include <catch2/catch.hpp>

#include "actors/fault_injection.hpp"

using rmbus::actors::injected_fault;
using rmbus::actors::parse_injected_fault;

TEST_CASE("a fault names one round, a range or a list of both") {
  const auto one = parse_injected_fault("throw:beta:30");
  CHECK(one.what == injected_fault::kind::throw_exception);
  CHECK(one.pool == "beta");
  CHECK(one.applies_to(30));
  CHECK_FALSE(one.applies_to(29));
  CHECK_FALSE(one.applies_to(31));

  const auto several = parse_injected_fault("hang:default:3-5,9");
  CHECK(several.what == injected_fault::kind::hang);
  CHECK(several.pool == "default");
  for (std::uint64_t c : {3, 4, 5, 9}) CHECK(several.applies_to(c));
  for (std::uint64_t c : {1, 2, 6, 8, 10}) CHECK_FALSE(several.applies_to(c));
}

TEST_CASE("a malformed fault is refused with what is wrong") {
  const auto reason = [](const char* spec) -> std::string {
    try {
      (void)parse_injected_fault(spec);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(reason("explode:beta:3").find("unknown fault 'explode'") != std::string::npos);
  CHECK(reason("throw:beta").find("three fields") != std::string::npos);
  CHECK(reason("throw::3").find("no pool") != std::string::npos);
  CHECK(reason("throw:beta:0").find("'0' is not a round number") != std::string::npos);
  CHECK(reason("hang:beta:8-3").find("'8-3' is not a range") != std::string::npos);
  CHECK(reason("hang:beta:3,").find("'' is not a round number") != std::string::npos);
  CHECK(reason("hang:beta:3-x").find("'3-x' is not a range") != std::string::npos);
  std::string many = "hang:beta:1";
  for (int i = 2; i <= 65; ++i) many += "," + std::to_string(i);
  CHECK(reason(many.c_str()).find("more than 64") != std::string::npos);
}
