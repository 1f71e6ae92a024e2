// The cross-pool allotment partition as pure arithmetic (actors/allotment_partition.hpp).
#include <catch2/catch.hpp>

#include "actors/allotment_partition.hpp"

using rmbus::actors::partition_allotments;
using rmbus::actors::waiting_np_work;
using rmbus::core::user_id;

namespace {
rmbus::core::scheduler_config with_allotment(std::uint64_t mb) {
  rmbus::core::scheduler_config cfg;
  cfg.settings.global_allotment_mb = mb;
  return cfg;
}
}  // namespace

TEST_CASE("the free allotment goes to the pool of the user's oldest waiting work only") {
  const auto cfg = with_allotment(10240);
  // alice holds 2048 MB in alpha and 4096 MB in beta: free = 10240 - 6144 = 4096.
  // Her oldest waiting work is in beta (submitted at 5 < 9), so beta's budget = 4096 + 4096 = 8192 and
  // alpha's = 2048. Each pool is told what the OTHERS hold: alpha 10240 - 2048 = 8192, beta 10240 - 8192 = 2048.
  const auto out = partition_allotments(cfg, {"alpha", "beta"}, {{"alpha", {{"alice", 2048}}}, {"beta", {{"alice", 4096}}}},
                                        {{"alice", "alpha", 9, "j2"}, {"alice", "beta", 5, "j1"}});
  CHECK(out.at("alpha").at(user_id{"alice"}) == 8192);
  CHECK(out.at("beta").at(user_id{"alice"}) == 2048);
  // The budgets sum to the limit: (10240 - 8192) + (10240 - 2048) = 2048 + 8192 = 10240.
}

TEST_CASE("two pools starting from nothing can never both see the whole allotment") {
  const auto cfg = with_allotment(6144);
  // Nothing held yet, alice waits in both pools; ties on submission time break on the job id ("a" < "b"),
  // so alpha gets the whole 6144 and beta is told 6144 is held elsewhere (room 0).
  const auto out = partition_allotments(cfg, {"alpha", "beta"}, {}, {{"alice", "beta", 1, "b"}, {"alice", "alpha", 1, "a"}});
  CHECK(out.at("alpha").at(user_id{"alice"}) == 0);
  CHECK(out.at("beta").at(user_id{"alice"}) == 6144);
}

TEST_CASE("users without a limit are not partitioned and per-user overrides win over the global allotment") {
  auto cfg = with_allotment(4096);
  cfg.settings.global_allotment_mb.reset();
  cfg.users.push_back({"bob", 3072});
  const auto out = partition_allotments(cfg, {"alpha", "beta"}, {{"alpha", {{"alice", 1024}, {"bob", 1024}}}}, {});
  CHECK(out.at("alpha").count(user_id{"alice"}) == 0);
  // bob: limit 3072, holds 1024 in alpha, nothing waiting: alpha's budget 1024 -> others 2048; beta's 0 -> 3072.
  CHECK(out.at("alpha").at(user_id{"bob"}) == 2048);
  CHECK(out.at("beta").at(user_id{"bob"}) == 3072);
}

TEST_CASE("a user already above the limit after a reconfiguration gets no room anywhere") {
  const auto cfg = with_allotment(2048);
  // Holds 3072 in alpha: budget(alpha) = 3072 > limit -> others 0, but alpha's own 3072 already exceeds 2048;
  // beta's budget 0 -> others 2048 = the whole limit, so beta has no room either.
  const auto out = partition_allotments(cfg, {"alpha", "beta"}, {{"alpha", {{"alice", 3072}}}}, {{"alice", "beta", 1, "x"}});
  CHECK(out.at("alpha").at(user_id{"alice"}) == 0);
  CHECK(out.at("beta").at(user_id{"alice"}) == 2048);
}

// Differencing skips gathering the waiting work when no allotment exists: that is sound only if the partition
// of any work is then empty, and if any limit at all, global or a user's own, is seen.
TEST_CASE("without any allotment the partition is empty whatever the work, and any_allotment_limit says so") {
  rmbus::core::scheduler_config cfg;
  CHECK_FALSE(rmbus::actors::any_allotment_limit(cfg));
  const auto out =
      partition_allotments(cfg, {"alpha", "beta"}, {{"alpha", {{"alice", 2048}}}, {"beta", {{"bob", 4096}}}},
                           {{"alice", "alpha", 9, "j2"}, {"bob", "beta", 5, "j1"}});
  CHECK(out.empty());

  rmbus::core::user_limit own;
  own.user = "alice";
  own.max_allotment_mb = 2048;
  cfg.users.push_back(own);
  CHECK(rmbus::actors::any_allotment_limit(cfg));
  cfg.users.front().max_allotment_mb.reset();  // a user entry without a limit of its own
  CHECK_FALSE(rmbus::actors::any_allotment_limit(cfg));
  CHECK(rmbus::actors::any_allotment_limit(with_allotment(4096)));
}
