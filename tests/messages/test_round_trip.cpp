// encode -> decode -> encode gives the same bytes and the decoded value equals the original, for every
// message, with optional fields both present and absent.
#include <catch2/catch.hpp>

#include "messages/topics.hpp"
#include "samples.hpp"

using namespace rmbus::messages;

namespace {

// Decodes `body` with `decode`, requires success, checks envelope and value, and re-encodes.
template <class T, class Decode>
void check_round_trip(std::string_view topic, const T& original, Decode decode) {
  const auto env = samples::env();
  const auto body = encode(env, original);
  envelope got_env;
  auto r = decode(topic, body, decode_limits{}, &got_env);
  INFO((r ? std::string{"ok"} : r.error().message()));
  REQUIRE(r.ok());
  CHECK(r.value() == original);
  CHECK(got_env == env);
  CHECK(encode(got_env, r.value()) == body);
  // The bus reads only the envelope, from any body.
  auto env_only = decode_envelope(topic, body);
  REQUIRE(env_only.ok());
  CHECK(env_only.value() == env);
}

}  // namespace

TEST_CASE("heartbeat round trip, with and without optional fields") {
  check_round_trip(topics::heartbeat, samples::full_heartbeat(), decode_heartbeat);
  check_round_trip(topics::heartbeat, samples::bare_heartbeat(), decode_heartbeat);
  // The bare one really omits the optional keys: 4 envelope + 3 fields = fixmap of 7 (0x87).
  CHECK(static_cast<unsigned char>(encode(samples::env(), samples::bare_heartbeat())[0]) == 0x87);
}

TEST_CASE("workmap round trip: jobs, services, reservations, processes, optional keys") {
  const auto m = samples::full_workmap();
  check_round_trip(topics::workmap, m, decode_workmap);
  check_round_trip(topics::workmap, workmap{}, decode_workmap);
}

TEST_CASE("rm_state round trip with every job and share status") {
  check_round_trip(topics::rm_state, samples::full_rm_state(), decode_rm_state);
  check_round_trip(topics::rm_state, rm_state{}, decode_rm_state);
}

TEST_CASE("an rm.state without the monitor keys (an older RM) decodes with them empty") {
  auto body = encode(samples::env(), samples::full_rm_state());
  auto tree = decode_value("rm.state", body);
  REQUIRE(tree.ok());
  auto& job0 = tree.value().as_map()->at("jobs").as_array()->at(0);
  for (const char* k : {"user", "class", "given", "demand", "fair_share"}) CHECK(job0.as_map()->erase(k) == 1);
  auto r = decode_rm_state(topics::rm_state, encode_value(tree.value()));
  REQUIRE(r.ok());
  const auto& j1 = r.value().jobs.at(0);
  CHECK(j1.id == "j1");
  CHECK(j1.shares.size() == 4);
  CHECK(j1.user.empty());
  CHECK(j1.class_name.empty());
  CHECK(j1.given == 0);
  CHECK(j1.demand == 0);
  CHECK(j1.fair_share == 0);
}

TEST_CASE("rm_nodes round trip with every node state") {
  check_round_trip(topics::rm_nodes, samples::full_rm_nodes(), decode_rm_nodes);
}

TEST_CASE("rm_cycle round trip keeps every counter in its own key") {
  const auto c = samples::full_rm_cycle();
  check_round_trip(topics::rm_cycle, c, decode_rm_cycle);
  // Each counter distinct, so a swapped key in the codec would break equality above; and the count:
  // 4 envelope keys + pool + 11 counters = 16 entries -> map16 header (0xde 0x00 0x10).
  const auto body = encode(samples::env(), c);
  CHECK(static_cast<unsigned char>(body[0]) == 0xde);
  CHECK(body[2] == 16);
}

TEST_CASE("rm_event round trip, including the bad_message helper") {
  check_round_trip(topics::rm_events, samples::full_rm_event(), decode_rm_event);
  const auto ev = make_bad_message_event(decode_error{"rm.state", "jobs[0].id", "missing required key"});
  CHECK(ev.kind == "bad_message");
  CHECK(ev.detail.at("topic") == "rm.state");
  CHECK(ev.detail.at("field") == "jobs[0].id");
  CHECK(ev.detail.at("error") == "rm.state: jobs[0].id: missing required key");
  check_round_trip(topics::rm_events, ev, decode_rm_event);
}

TEST_CASE("admin request and reply round trip with every value kind") {
  check_round_trip(topics::admin, samples::full_admin_request(), decode_admin_request);
  check_round_trip(topics::admin, samples::full_admin_reply(), decode_admin_reply);
  check_round_trip(topics::admin, admin_reply{false, "no such node n99", {}}, decode_admin_reply);
}

TEST_CASE("a large work map round-trips byte for byte") {
  // 10,000 items with two processes each: exercises array16/array32-free sizes and repeated keys.
  workmap m;
  for (int i = 0; i < 10'000; ++i) m.work.push_back(samples::job_item("j" + std::to_string(i), 1'000 + i));
  check_round_trip(topics::workmap, m, decode_workmap);
}

TEST_CASE("every enum's wire name parses back to the same value, and unknown names do not parse") {
  for (auto k : {work_kind::job, work_kind::service, work_kind::ap, work_kind::reservation})
    CHECK(parse_work_kind(to_string(k)) == k);
  for (auto s : {work_state::waiting, work_state::running, work_state::completing, work_state::completed})
    CHECK(parse_work_state(to_string(s)) == s);
  for (auto s : {process_state::starting, process_state::initializing, process_state::running, process_state::ended})
    CHECK(parse_process_state(to_string(s)) == s);
  for (auto s : {job_status::scheduled, job_status::pending, job_status::refused})
    CHECK(parse_job_status(to_string(s)) == s);
  for (auto s : {share_status::running, share_status::new_, share_status::preempt, share_status::evict})
    CHECK(parse_share_status(to_string(s)) == s);
  for (auto s : {node_state::up, node_state::missing, node_state::down, node_state::varied_off, node_state::quiesced,
                 node_state::blacklisted})
    CHECK(parse_node_state(to_string(s)) == s);
  // The wire names are the contract: spot-check the ones whose C++ name differs or could drift.
  CHECK(to_string(share_status::new_) == "new");
  CHECK(to_string(node_state::varied_off) == "varied_off");
  CHECK(to_string(work_kind::ap) == "ap");
  CHECK_FALSE(parse_work_kind("Job").has_value());
  CHECK_FALSE(parse_node_state("").has_value());
}

TEST_CASE("rm_state with its entries kept encoded gives the same bytes as packing every job, and decodes alike") {
  auto kept = samples::full_rm_state();
  REQUIRE(kept.jobs.size() >= 2);
  for (const auto& j : kept.jobs) kept.encoded_jobs.push_back(encode_job_entry(j));
  const auto packed = encode(samples::env(), samples::full_rm_state());
  CHECK(encode(samples::env(), kept) == packed);
  auto back = decode_rm_state(topics::rm_state, encode(samples::env(), kept));
  REQUIRE(back.ok());
  CHECK(back.value() == samples::full_rm_state());
  CHECK(back.value().encoded_jobs.empty());  // not on the wire
  // The kept bytes are what goes out: a stale entry would be sent as it is (the sender keeps them current).
  kept.encoded_jobs.front() = encode_job_entry(kept.jobs.back());
  CHECK(encode(samples::env(), kept) != packed);
  // Not one per job: every job is packed.
  kept.encoded_jobs.pop_back();
  CHECK(encode(samples::env(), kept) == packed);
}

TEST_CASE("rm_nodes with its entries kept encoded: the same bytes as packing every node, decoded alike") {
  auto kept = samples::full_rm_nodes();
  REQUIRE(kept.nodes.size() >= 2);
  for (const auto& n : kept.nodes) kept.encoded_nodes.push_back(encode_node_entry(n));
  const auto packed = encode(samples::env(), samples::full_rm_nodes());
  CHECK(encode(samples::env(), kept) == packed);
  auto back = decode_rm_nodes(topics::rm_nodes, encode(samples::env(), kept));
  REQUIRE(back.ok());
  CHECK(back.value() == samples::full_rm_nodes());
  CHECK(back.value().encoded_nodes.empty());  // not on the wire
  // The kept bytes are what goes out: a stale entry would be sent as it is (the sender keeps them current).
  kept.encoded_nodes.front() = encode_node_entry(kept.nodes.back());
  CHECK(encode(samples::env(), kept) != packed);
  // Not one per node: every node is packed.
  kept.encoded_nodes.pop_back();
  CHECK(encode(samples::env(), kept) == packed);
}

TEST_CASE("rm_state: a share's optional reclaim_at_ms round-trips, and is absent unless set") {
  auto m = samples::full_rm_state();
  m.jobs.at(0).shares.at(0).reclaim_at_ms = 1'700'000'045'000ULL;
  check_round_trip(topics::rm_state, m, decode_rm_state);
  // Unset, the share map keeps its four keys (id, node, quanta, status): an older reader sees the same body.
  auto plain = decode_value("rm.state", encode(samples::env(), samples::full_rm_state()));
  REQUIRE(plain.ok());
  const auto& share0 = plain.value().as_map()->at("jobs").as_array()->at(0).as_map()->at("shares").as_array()->at(0);
  CHECK(share0.as_map()->size() == 4);
  auto with = decode_value("rm.state", encode(samples::env(), m));
  REQUIRE(with.ok());
  const auto& share1 = with.value().as_map()->at("jobs").as_array()->at(0).as_map()->at("shares").as_array()->at(0);
  CHECK(share1.as_map()->size() == 5);
  CHECK(share1.as_map()->count("reclaim_at_ms") == 1);
}

TEST_CASE("rm.state's optional group key: sent only when set, absent decodes as empty") {
  const auto body = encode(samples::env(), samples::full_rm_state());
  auto tree = decode_value("rm.state", body);
  REQUIRE(tree.ok());
  const auto& jobs = *tree.value().as_map()->at("jobs").as_array();
  // j1's user is in share group "physics"; j2 and j3 are in none, so their maps carry no "group" key.
  REQUIRE(jobs.at(0).as_map()->count("group") == 1);
  CHECK(*jobs.at(0).as_map()->at("group").as_string() == "physics");
  CHECK(jobs.at(1).as_map()->count("group") == 0);
  CHECK(jobs.at(2).as_map()->count("group") == 0);
  auto r = decode_rm_state(topics::rm_state, body);
  REQUIRE(r.ok());
  CHECK(r.value().jobs.at(0).group == "physics");
  CHECK(r.value().jobs.at(1).group.empty());
  // A group that is not a string is named in the error.
  auto bad = tree.value();
  (*bad.as_map()->at("jobs").as_array())[0].as_map()->at("group") = value{std::uint64_t{7}};
  auto e = decode_rm_state(topics::rm_state, encode_value(bad));
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message().find("group") != std::string::npos);
}

TEST_CASE("rm.state's optional capped_by key: sent only when set, round-trips, absent decodes as empty") {
  auto state = samples::full_rm_state();
  state.jobs.at(0).capped_by = "prediction";
  const auto body = encode(samples::env(), state);
  auto tree = decode_value("rm.state", body);
  REQUIRE(tree.ok());
  const auto& jobs = *tree.value().as_map()->at("jobs").as_array();
  REQUIRE(jobs.at(0).as_map()->count("capped_by") == 1);
  CHECK(*jobs.at(0).as_map()->at("capped_by").as_string() == "prediction");
  CHECK(jobs.at(1).as_map()->count("capped_by") == 0);
  auto r = decode_rm_state(topics::rm_state, body);
  REQUIRE(r.ok());
  CHECK(r.value() == state);
  auto bad = tree.value();
  (*bad.as_map()->at("jobs").as_array())[0].as_map()->at("capped_by") = value{true};
  auto e = decode_rm_state(topics::rm_state, encode_value(bad));
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message().find("capped_by") != std::string::npos);
}
