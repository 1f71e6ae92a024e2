// closest_name: the "did you mean ...?" of a misspelt key: the edit distance it is built on, when it offers
// a name and when it keeps quiet.

#include <string>

#include "config/detail/closest_name.hpp"
#include "support.hpp"

using rmbus::config::detail::closest_name;
using rmbus::config::detail::edit_distance;

TEST_CASE("edit distance counts insertions, deletions, substitutions and neighbour swaps as one each",
          "[config]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("", "abc") == 3);             // three insertions
  CHECK(edit_distance("abc", "") == 3);             // three deletions
  CHECK(edit_distance("quantom", "quantum") == 1);  // o -> u
  CHECK(edit_distance("wieght", "weight") == 1);    // "ie" swapped
  CHECK(edit_distance("kitten", "sitting") == 3);   // k -> s, e -> i, + g
  CHECK(edit_distance("ducc.rm.defragmentation.threshold", "ducc.rm.fragmentation.threshold") ==
        2);                                // - d, - e
  CHECK(edit_distance("abc", "ca") == 3);  // optimal string alignment: a swap is not edited again
}

TEST_CASE("closest name: the nearest within 3 edits and a third of the length, ties to the first listed",
          "[config]") {
  const std::vector<std::string_view> keys = {"ducc.rm.share.quantum", "ducc.rm.prediction",
                                              "ducc.rm.prediction.fudge", "ducc.rm.node.stability",
                                              "ducc.rm.init.stability"};
  CHECK(closest_name("ducc.rm.share.quantom", keys) == std::optional<std::string>{"ducc.rm.share.quantum"});
  // "prediction.fudg" is 1 from prediction.fudge and 6 from prediction: the nearer wins.
  CHECK(closest_name("ducc.rm.prediction.fudg", keys) ==
        std::optional<std::string>{"ducc.rm.prediction.fudge"});
  // 4 edits away from everything: too far to be the likely intent.
  CHECK_FALSE(closest_name("ducc.rm.share.qqqqqqq", keys).has_value());
  CHECK_FALSE(closest_name("ducc.rm.colour", keys).has_value());
  // An exact match is no suggestion (the caller asks only about names it does not know).
  CHECK_FALSE(closest_name("ducc.rm.prediction", keys).has_value());
  // "ducc.rm.nide.stability" is 1 from node.stability (i -> o) and 3 from init.stability.
  CHECK(closest_name("ducc.rm.nide.stability", keys) == std::optional<std::string>{"ducc.rm.node.stability"});
  // A tie goes to the earlier candidate: "ab" -> "ac" and "ab" -> "bb" are both 1 edit; 6 letters allow 2.
  CHECK(closest_name("xxxxab", {"xxxxac", "xxxxbb"}) == std::optional<std::string>{"xxxxac"});
  CHECK(closest_name("xxxxab", {"xxxxbb", "xxxxac"}) == std::optional<std::string>{"xxxxbb"});
  // Short names: a third of the length bounds the edits. 5 letters: 1 edit; 2 letters: none.
  CHECK(closest_name("share", {"shard"}) == std::optional<std::string>{"shard"});
  CHECK_FALSE(closest_name("share", {"shore2"}).has_value());  // 2 edits > 5 / 3
  CHECK_FALSE(closest_name("ab", {"ac"}).has_value());
}

TEST_CASE("closest name: a megabyte-long key costs nothing and gets no suggestion", "[config][bounds]") {
  const std::string hostile(1 << 20, 'a');
  CHECK_FALSE(closest_name(hostile, {"ducc.rm.share.quantum", "ducc.rm.prediction"}).has_value());
}
