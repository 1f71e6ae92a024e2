// The compact node description: counts, sizes, pools, name prefixes, numbering, and errors that name the bad
// group.

#include <catch2/catch.hpp>

#include "tools/sim/node_spec.hpp"

using namespace rmbus::sim;

TEST_CASE("node description: groups with counts, sizes and pools") {
  const auto groups = parse_node_groups("200x64G@default,20x256G@bigmem");
  REQUIRE(groups.size() == 2);
  // 64 GB = 64 x 1024 MB; the prefix defaults to the pool name.
  CHECK(groups[0] == node_group{200, 65536, "default", "default"});
  CHECK(groups[1] == node_group{20, 262144, "bigmem", "bigmem"});
}

TEST_CASE("node description: count defaults to 1, M sizes, lower case, spaces, explicit prefix") {
  const auto groups = parse_node_groups(" 512m , 3X16g:small , 2x1G@pool-a:pa ");
  REQUIRE(groups.size() == 3);
  CHECK(groups[0] == node_group{1, 512, "", "node"});
  CHECK(groups[1] == node_group{3, 16384, "", "small"});
  CHECK(groups[2] == node_group{2, 1024, "pool-a", "pa"});
}

TEST_CASE("node description: names are <prefix>-NNN, numbered per prefix across groups") {
  const auto nodes = parse_nodes("2x32G,1x64G,2x8G:tiny");
  REQUIRE(nodes.size() == 5);
  CHECK(nodes[0] == node_def{"node-001", 32768, ""});
  CHECK(nodes[1] == node_def{"node-002", 32768, ""});
  // Same prefix "node": numbering continues, so names stay unique.
  CHECK(nodes[2] == node_def{"node-003", 65536, ""});
  CHECK(nodes[3] == node_def{"tiny-001", 8192, ""});
  CHECK(nodes[4] == node_def{"tiny-002", 8192, ""});
}

TEST_CASE("node description: padding widens past 999 nodes of one prefix") {
  const auto nodes = parse_nodes("1200x1G");
  REQUIRE(nodes.size() == 1200);
  // 1200 needs four digits, so every name of that prefix has four.
  CHECK(nodes.front().name == "node-0001");
  CHECK(nodes.back().name == "node-1200");
}

TEST_CASE("node description: DUCC's --default-- pool name is accepted") {
  const auto nodes = parse_nodes("2x4G@--default--");
  CHECK(nodes[0].name == "--default---001");
  CHECK(nodes[0].pool == "--default--");
}

TEST_CASE("node description: errors name the bad group and what is wrong") {
  auto message = [](const char* text) {
    try {
      parse_nodes(text);
    } catch (const node_spec_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("4x32Q") ==
        "node description \"4x32Q\": group \"4x32Q\": size \"32Q\" needs a G or M suffix");
  CHECK(message("4x32G,0x8G") ==
        "node description \"4x32G,0x8G\": group \"0x8G\": count \"0\" must be a whole number of at least 1");
  CHECK(
      message("4x32G,,2x8G") ==
      "node description \"4x32G,,2x8G\": group \"\": empty group (two commas in a row, or a trailing comma)");
  CHECK(message("4x32G,") ==
        "node description \"4x32G,\": group \"\": empty group (two commas in a row, or a trailing comma)");
  CHECK(message("ax4G") ==
        "node description \"ax4G\": group \"ax4G\": count \"a\" must be a whole number of at least 1");
  CHECK(message("4x") ==
        "node description \"4x\": group \"4x\": missing the memory size (expected e.g. 64G or 512M)");
  CHECK(message("4x0G") ==
        "node description \"4x0G\": group \"4x0G\": size \"0G\" must be a whole number above 0 and at most "
        "65536G");
  CHECK(message("4x8G@bad pool") ==
        "node description \"4x8G@bad pool\": group \"4x8G@bad pool\": pool \"bad pool\" must be 1-64 "
        "letters, digits, '-', '_' or '.'");
  CHECK(message("4x8G:") ==
        "node description \"4x8G:\": group \"4x8G:\": name prefix \"\" must be 1-64 letters, digits, '-', "
        "'_' or '.'");
  CHECK(message("") == "node description is empty (expected e.g. \"4x32G\")");
  // 6000 + 6000 > 10000: the group that crosses the bound is named.
  CHECK(message("6000x1G,6000x1G") ==
        "node description \"6000x1G,6000x1G\": group \"6000x1G\": more than 10000 nodes in total");
  // A count with 13 digits would overflow arithmetic on the way to the bound: refused as a count.
  CHECK(message("1234567890123x1G") ==
        "node description \"1234567890123x1G\": group \"1234567890123x1G\": count \"1234567890123\" must be "
        "a whole number of at least 1");
}

TEST_CASE("sizes: parse and format are inverse") {
  std::uint64_t mb = 0;
  REQUIRE(parse_size_mb("4G", mb));
  CHECK(mb == 4096);
  REQUIRE(parse_size_mb("1536M", mb));
  CHECK(mb == 1536);
  CHECK(format_size_mb(4096) == "4G");
  CHECK(format_size_mb(1536) == "1536M");
  CHECK_FALSE(parse_size_mb("4", mb));
  CHECK_FALSE(parse_size_mb("-4G", mb));
  CHECK_FALSE(parse_size_mb("4.5G", mb));
  CHECK_FALSE(parse_size_mb("99999999G", mb));  // above 64 TB
  CHECK(mb == 1536);                            // untouched by the failures
}
