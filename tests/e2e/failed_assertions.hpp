#pragma once
// How many assertions have failed so far in this test process: a fixture compares the count at its start and
// at its end to tell a failed CHECK (which, unlike a REQUIRE, throws nothing) and print the RM's logs.

#include <cstdint>

namespace rmbus::e2e {

std::uint64_t failed_assertions();

}  // namespace rmbus::e2e
