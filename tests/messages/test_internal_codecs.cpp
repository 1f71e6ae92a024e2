// The typed internal messages (messages/internal/): every one survives its codec exactly (encode -> decode
// gives the same struct, encode again gives the same bytes), also through the payload the router carries
// between processes; and bad bodies give errors that name the field, never a crash.
#include <catch2/catch.hpp>

#include "internal_samples.hpp"
#include "messages/internal/topics.hpp"
#include "messages/topics.hpp"

using namespace rmbus::messages;
namespace it = rmbus::messages::internal_topics;

namespace {

// encode -> decode -> equal, and encode(decode(bytes)) == bytes.
template <class T, class Decode>
void round_trips(const T& msg, Decode decode, std::string_view topic) {
  const auto env = samples::env(99, "rmbus.1.abc:intake");
  const auto bytes = encode(env, msg);
  envelope got_env;
  auto back = decode(topic, bytes, decode_limits{}, &got_env);
  REQUIRE(back.ok());
  CHECK(back.value() == msg);
  CHECK(got_env == env);
  CHECK(encode(env, back.value()) == bytes);
}

// The same message through the payload: decode_payload picks the decoder by topic.
template <class T>
void payload_round_trips(const T& msg, std::string_view topic) {
  const auto env = samples::env(5, "rmbus.2.xyz:scheduler.alpha");
  const payload p{msg};
  const auto bytes = encode_payload(env, p);
  envelope got_env;
  auto back = decode_payload(topic, bytes, decode_limits{}, &got_env);
  REQUIRE(back.ok());
  REQUIRE(std::holds_alternative<T>(back.value()));
  CHECK(std::get<T>(back.value()) == msg);
  CHECK(got_env == env);
}

// A sample's body with one key's value replaced by a string, to see the decoder name the field.
template <class T>
std::string with_key_as_string(const T& msg, std::string_view key) {
  auto tree = decode_value("t", encode(samples::env(), msg));
  REQUIRE(tree.ok());
  auto* m = tree.value().as_map();
  REQUIRE(m != nullptr);
  REQUIRE(m->count(std::string{key}) == 1);
  (*m)[std::string{key}] = value{"wrong"};
  return encode_value(tree.value());
}

template <class T>
std::string without_key(const T& msg, std::string_view key) {
  auto tree = decode_value("t", encode(samples::env(), msg));
  REQUIRE(tree.ok());
  auto* m = tree.value().as_map();
  REQUIRE(m->erase(std::string{key}) == 1);
  return encode_value(tree.value());
}

}  // namespace

TEST_CASE("every internal message round-trips through its codec") {
  round_trips(samples::full_node_ops(), decode_node_ops, "rm.internal.node.alpha");
  round_trips(samples::full_node_changes(), decode_node_changes, it::node_changes);
  round_trips(node_sync_request{"rmbus.1.abc:publisher", {}}, decode_node_sync_request, it::node_sync);
  round_trips(samples::full_node_snapshot(), decode_node_snapshot, it::node_snapshot);
  round_trips(samples::full_work_slice(), decode_work_slice, "rm.internal.work.alpha");
  round_trips(samples::full_round_start(), decode_round_start, it::round);
  round_trips(samples::full_pool_plan(), decode_pool_plan, it::plan);
  round_trips(round_done{12}, decode_round_done, it::done);
  round_trips(samples::full_admin_query(), decode_admin_query, "rm.internal.query.alpha");
  round_trips(samples::full_admin_answer(), decode_admin_answer, it::answer);
  round_trips(samples::full_vary_request(), decode_vary_request, it::vary);
  round_trips(vary_request{1, false, {}}, decode_vary_request, it::vary);
  round_trips(vary_request{2, true, {"n1"}, true}, decode_vary_request, it::vary);   // drain
  round_trips(vary_request{3, false, {"n1"}, true}, decode_vary_request, it::vary);  // undrain
  round_trips(samples::full_admin_query(), decode_admin_query, it::marks_query);
  round_trips(samples::full_recovered_nodes(), decode_recovered_nodes, it::recovered);
  round_trips(reconfigure_request{}, decode_reconfigure_request, it::reconfigure);
}

TEST_CASE("the batch number of node changes is its own key, apart from the envelope's seq") {
  const auto env = samples::env(3);
  auto msg = samples::full_node_changes();  // batch 70,000
  auto back = decode_node_changes(it::node_changes, encode(env, msg));
  REQUIRE(back.ok());
  CHECK(back.value().seq == 70'000);
  auto tree = decode_value("t", encode(env, msg));
  REQUIRE(tree.ok());
  CHECK(*tree.value().as_map()->at("batch").as_uint() == 70'000);
  CHECK(*tree.value().as_map()->at("seq").as_uint() == 3);
}

TEST_CASE("the payload picks the decoder by topic, for every internal and public message") {
  payload_round_trips(samples::full_node_ops(), it::node_topic("alpha"));
  payload_round_trips(samples::full_node_changes(), it::node_changes);
  payload_round_trips(node_sync_request{"r", {}}, it::node_sync);
  round_trips(node_sync_request{"rmbus.1.abc:scheduler.beta", "beta"}, decode_node_sync_request, it::node_sync);
  payload_round_trips(samples::full_node_snapshot(), it::node_snapshot);
  payload_round_trips(samples::full_work_slice(), it::work_topic("beta"));
  payload_round_trips(samples::full_round_start(), it::round);
  payload_round_trips(samples::full_pool_plan(), it::plan);
  payload_round_trips(round_done{1}, it::done);
  payload_round_trips(samples::full_admin_query(), it::query_topic("alpha"));
  payload_round_trips(samples::full_admin_answer(), it::answer);
  payload_round_trips(samples::full_vary_request(), it::vary);
  payload_round_trips(samples::full_recovered_nodes(), it::recovered);
  payload_round_trips(reconfigure_request{}, it::reconfigure);
  payload_round_trips(samples::full_rm_state(), topics::rm_state);
  payload_round_trips(samples::full_rm_cycle(), topics::rm_cycle);
  payload_round_trips(samples::full_rm_nodes(), topics::rm_nodes);
  payload_round_trips(samples::full_rm_event(), topics::rm_events);
}

TEST_CASE("a body on a topic no message is known on is an error naming the topic") {
  auto r = decode_payload("rm.internal.nonsense", encode(samples::env(), round_done{1}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().topic == "rm.internal.nonsense");
  // The right body under the wrong topic is read as that topic's message: here it lacks its keys.
  auto wrong = decode_payload(it::plan, encode(samples::env(), round_done{1}));
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().field == "pool");
}

TEST_CASE("a field of the wrong type is named with its path") {
  auto changes = samples::full_node_changes();
  auto bad = decode_node_changes(it::node_changes, with_key_as_string(changes, "heartbeats"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "heartbeats");
  CHECK(bad.error().topic == it::node_changes);

  // Deep inside: the first op's memory as a string.
  auto tree = decode_value("t", encode(samples::env(), samples::full_node_ops()));
  REQUIRE(tree.ok());
  (*(*tree.value().as_map()->at("ops").as_array())[1].as_map())["memory_mb"] = value{"lots"};
  auto deep = decode_node_ops("rm.internal.node.alpha", encode_value(tree.value()));
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().field == "ops[1].memory_mb");

  auto plan = decode_pool_plan(it::plan, with_key_as_string(samples::full_pool_plan(), "machines"));
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().field == "machines");
  auto slice = decode_work_slice("rm.internal.work.alpha", with_key_as_string(samples::full_work_slice(), "other_np_mb"));
  REQUIRE_FALSE(slice.ok());
  CHECK(slice.error().field == "other_np_mb");
}

TEST_CASE("a work slice's optional keys are left out when unset, and a slice without them decodes to their defaults") {
  work_slice plain = samples::full_work_slice();
  plain.foreign_processes.clear();
  const auto body = encode(samples::env(), plain);
  CHECK(body.find("foreign_processes") == std::string::npos);
  CHECK(body.find("settling") == std::string::npos);
  auto back = decode_work_slice("rm.internal.work.alpha", body);
  REQUIRE(back.ok());
  CHECK(back.value().foreign_processes.empty());
  CHECK(back.value() == plain);
  // A count that is not a whole number is named.
  auto bad = decode_work_slice("rm.internal.work.alpha", with_key_as_string(samples::full_work_slice(), "foreign_processes"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "foreign_processes");
}

TEST_CASE("a missing required key is named") {
  auto a = decode_round_start(it::round, without_key(samples::full_round_start(), "pools"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "pools");
  CHECK(a.error().what == "missing required key");
  auto b = decode_pool_plan(it::plan, without_key(samples::full_pool_plan(), "machines_complete"));
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().field == "machines_complete");
  auto c = decode_node_snapshot(it::node_snapshot, without_key(samples::full_node_snapshot(), "batch"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().field == "batch");
}

TEST_CASE("an unknown enum value names the value and the choices") {
  auto tree = decode_value("t", encode(samples::env(), samples::full_vary_request()));
  REQUIRE(tree.ok());
  (*tree.value().as_map())["op"] = value{"vary_sideways"};
  auto r = decode_vary_request(it::vary, encode_value(tree.value()));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "op");
  CHECK(r.error().what.find("vary_sideways") != std::string::npos);
  CHECK(r.error().what.find("vary_off") != std::string::npos);
}

TEST_CASE("truncated, oversized and over-long bodies are refused, never half read") {
  const auto body = encode(samples::env(), samples::full_pool_plan());
  for (std::size_t cut : {std::size_t{1}, body.size() / 2, body.size() - 1}) {
    auto r = decode_pool_plan(it::plan, std::string_view{body}.substr(0, cut));
    CHECK_FALSE(r.ok());
  }
  decode_limits small;
  small.max_body_bytes = body.size() - 1;
  CHECK_FALSE(decode_pool_plan(it::plan, body, small).ok());
  decode_limits short_arrays;
  short_arrays.max_array_len = 3;  // the sample has 4 machines
  auto r = decode_pool_plan(it::plan, body, short_arrays);
  REQUIRE_FALSE(r.ok());
  // A body announcing a 2^31-element array in 5 bytes is refused without allocating for it.
  CHECK_FALSE(decode_payload(it::node_changes, std::string("\xdd\x7f\xff\xff\xff", 5)).ok());
}

TEST_CASE("unknown keys are ignored, so a newer sender's extra fields do not break an older receiver") {
  auto tree = decode_value("t", encode(samples::env(), samples::full_round_start()));
  REQUIRE(tree.ok());
  (*tree.value().as_map())["added_later"] = value{std::uint64_t{1}};
  auto r = decode_round_start(it::round, encode_value(tree.value()));
  REQUIRE(r.ok());
  CHECK(r.value() == samples::full_round_start());
}

TEST_CASE("forgetting nodes: node_changes' optional forgotten names, the forget operation and the scheduler's answer round-trip") {
  round_trips(samples::node_changes_with_forgotten(), decode_node_changes, it::node_changes);
  round_trips(samples::node_ops_forget(), decode_node_ops, it::node_topic("alpha"));
  round_trips(samples::full_machines_forgotten(), decode_machines_forgotten, it::forgotten);
  round_trips(machines_forgotten{"beta", {}, {}}, decode_machines_forgotten, it::forgotten);
  payload_round_trips(samples::full_machines_forgotten(), it::forgotten);
  payload_round_trips(samples::node_changes_with_forgotten(), it::node_changes);
  // Absent when empty, so a batch that forgets nothing is the bytes it was before the key existed.
  auto tree = decode_value("t", encode(samples::env(), samples::full_node_changes()));
  REQUIRE(tree.ok());
  CHECK(tree.value().as_map()->count("forgotten") == 0);
  auto with = decode_value("t", encode(samples::env(), samples::node_changes_with_forgotten()));
  REQUIRE(with.ok());
  CHECK(with.value().as_map()->at("forgotten").as_array()->size() == 2);
  // A wrong type is named.
  auto bad = decode_node_changes(it::node_changes, with_key_as_string(samples::node_changes_with_forgotten(), "forgotten"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "forgotten");
  auto missing = decode_machines_forgotten(it::forgotten, without_key(samples::full_machines_forgotten(), "kept"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().field == "kept");
}

TEST_CASE("a fresh scheduler's seed request, publication's answer and a plan's generation round-trip") {
  round_trips(seed_request{"alpha", 1'700'000'000'123}, decode_seed_request, it::seed_request);
  payload_round_trips(seed_request{"alpha", 1'700'000'000'123}, it::seed_request);
  // The answer is the last published schedule itself, on the pool's seed topic.
  payload_round_trips(samples::full_rm_state(), it::seed_topic("alpha"));
  auto missing = decode_seed_request(it::seed_request, without_key(seed_request{"alpha", 7}, "generation"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().field == "generation");
  // A plan from an RM before generations existed decodes with generation 0.
  auto tree = decode_value("t", encode(samples::env(), samples::full_pool_plan()));
  REQUIRE(tree.ok());
  tree.value().as_map()->erase("generation");
  auto old = decode_pool_plan(it::plan, encode_value(tree.value()));
  REQUIRE(old.ok());
  CHECK(old.value().generation == 0);
  CHECK(old.value().jobs == samples::full_pool_plan().jobs);
}

TEST_CASE("a change slice and a scheduler's request for a full slice round-trip, and a change that cannot be one is named") {
  work_slice change = samples::full_work_slice();
  change.work.resize(1);
  change.seq = 8;
  change.base_seq = 7;
  change.removed = {"j1", "j4"};
  round_trips(change, decode_work_slice, "rm.internal.work.alpha");
  payload_round_trips(change, it::work_topic("alpha"));
  CHECK_FALSE(change.full());
  // A full slice from an RM before numbered slices decodes as full, unnumbered.
  CHECK(decode_work_slice("rm.internal.work.alpha", encode(samples::env(), samples::full_work_slice())).value().full());

  round_trips(work_sync_request{"alpha", 12}, decode_work_sync_request, it::work_sync);
  payload_round_trips(work_sync_request{"alpha", 12}, it::work_sync);
  auto missing = decode_work_sync_request(it::work_sync, without_key(work_sync_request{"alpha", 12}, "cycle"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().field == "cycle");
  auto nameless = decode_work_sync_request(it::work_sync, encode(samples::env(), work_sync_request{"", 12}));
  REQUIRE_FALSE(nameless.ok());
  CHECK(nameless.error().field == "pool");

  // A change must build on an earlier slice, and only a change removes items.
  work_slice ahead = change;
  ahead.base_seq = 8;
  auto a = decode_work_slice("rm.internal.work.alpha", encode(samples::env(), ahead));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "base_slice_seq");
  work_slice full_removing = change;
  full_removing.base_seq = 0;
  auto b = decode_work_slice("rm.internal.work.alpha", encode(samples::env(), full_removing));
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().field == "removed");
  auto c = decode_work_slice("rm.internal.work.alpha", with_key_as_string(change, "removed"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().field == "removed");
}

TEST_CASE("a work slice's acted_cycle round-trips, is absent when unknown, and a wrong type is named") {
  work_slice acked = samples::full_work_slice();
  acked.acted_cycle = 41;
  round_trips(acked, decode_work_slice, "rm.internal.work.alpha");
  payload_round_trips(acked, it::work_topic("alpha"));
  const auto plain = encode(samples::env(), samples::full_work_slice());
  CHECK(plain.find("acted_cycle") == std::string::npos);
  CHECK_FALSE(decode_work_slice("rm.internal.work.alpha", plain).value().acted_cycle.has_value());
  auto bad = decode_work_slice("rm.internal.work.alpha", with_key_as_string(acked, "acted_cycle"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "acted_cycle");
}

TEST_CASE("node_ops' optional announced_to round-trips, and is absent when empty") {
  auto answer = samples::full_node_ops();
  answer.announced_to = "rmbus.1.abc:scheduler.alpha";
  round_trips(answer, decode_node_ops, it::node_topic("alpha"));
  round_trips(node_ops{{}, "rmbus.1.abc:scheduler.beta"}, decode_node_ops, it::node_topic("beta"));
  payload_round_trips(answer, it::node_topic("alpha"));
  auto plain = decode_value("t", encode(samples::env(), samples::full_node_ops()));
  REQUIRE(plain.ok());
  CHECK(plain.value().as_map()->count("announced_to") == 0);
  auto marked = decode_value("t", encode(samples::env(), answer));
  REQUIRE(marked.ok());
  CHECK(marked.value().as_map()->count("announced_to") == 1);
  // A wrong type is refused with the key's name.
  (*marked.value().as_map())["announced_to"] = value{std::uint64_t{7}};
  auto bad = decode_node_ops(it::node_topic("alpha"), encode_value(marked.value()));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "announced_to");
}

TEST_CASE("a change plan and publication's request for a full plan round-trip, and a plan that cannot be one is named") {
  pool_plan change = samples::full_pool_plan();
  change.jobs.resize(1);
  change.plan_seq = 9;
  change.base_plan_seq = 8;
  change.removed_jobs = {"j7", "j9"};
  round_trips(change, decode_pool_plan, it::plan);
  payload_round_trips(change, it::plan);
  CHECK_FALSE(change.full());
  // A full plan carries its seq and no base; a plan from an RM before numbered plans has neither: full.
  pool_plan full = samples::full_pool_plan();
  full.plan_seq = 1;
  round_trips(full, decode_pool_plan, it::plan);
  CHECK(full.full());
  auto plain = decode_value("t", encode(samples::env(), samples::full_pool_plan()));
  REQUIRE(plain.ok());
  for (const char* key : {"plan_seq", "base_plan_seq", "removed_jobs"}) CHECK(plain.value().as_map()->count(key) == 0);
  CHECK(decode_pool_plan(it::plan, encode(samples::env(), samples::full_pool_plan())).value().full());

  // Wrong types and impossible chains are named.
  for (const char* key : {"plan_seq", "base_plan_seq", "removed_jobs"}) {
    auto r = decode_pool_plan(it::plan, with_key_as_string(change, key));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == key);
  }
  pool_plan ahead = change;
  ahead.base_plan_seq = 9;
  auto a = decode_pool_plan(it::plan, encode(samples::env(), ahead));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "base_plan_seq");
  pool_plan full_removing = change;
  full_removing.base_plan_seq = 0;
  auto b = decode_pool_plan(it::plan, encode(samples::env(), full_removing));
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().field == "removed_jobs");
  pool_plan empty_id = change;
  empty_id.removed_jobs = {"j7", ""};
  auto e = decode_pool_plan(it::plan, encode(samples::env(), empty_id));
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().field == "removed_jobs[1]");

  round_trips(plan_sync_request{"alpha", 3}, decode_plan_sync_request, it::plan_sync);
  payload_round_trips(plan_sync_request{"alpha", 3}, it::plan_sync);
  auto missing = decode_plan_sync_request(it::plan_sync, without_key(plan_sync_request{"alpha", 3}, "generation"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().field == "generation");
  auto nameless = decode_plan_sync_request(it::plan_sync, encode(samples::env(), plan_sync_request{"", 3}));
  REQUIRE_FALSE(nameless.ok());
  CHECK(nameless.error().field == "pool");
  auto wrong = decode_plan_sync_request(it::plan_sync, with_key_as_string(plan_sync_request{"alpha", 3}, "generation"));
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().field == "generation");
}
