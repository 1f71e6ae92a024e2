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
