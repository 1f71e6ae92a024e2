// rmbus-admin: the admin client. Sends one request to the RM's admin endpoint (ZeroMQ REQ, one frame of
// MessagePack: `cmd` plus arguments) and prints the reply as a compact table, or as JSON (--json); the
// outputs, the JSON schema and the exit codes are in docs/admin.md.
//
//   rmbus-admin [--admin EP | --config FILE | --ducc FILE] [--timeout-ms 5000] [--key FILE --server-key FILE]
//               [--json] [--details] COMMAND [ARGS]      (the options in [] may also follow the command)
//     status | reconfigure
//     qload [--pool P] | qoccupancy [--pool P] [--state S] [--node PATTERN]
//     jobs [--user U] [--class C] [--state S] | users [--user U] [--class C] [--state S]
//     vary-off NODE... | vary-on NODE...      (DUCC's vary_off / vary_on too)
//     drain NODE... | undrain NODE...          (Slurm's DRAIN: no new work, what runs finishes)
//     explain JOB        (with a running job's estimated end, pending work's estimated start)
//     whatif --user U [--class C] [--kind job] --memory-mb M [--max-processes N] [--id ID]
//            [--items N [--item-ms MS] [--threads T]]
//     handover [--to INSTANCE]   (HA: the active stops publishing; the named or best standby takes over)
//
// The endpoint: --admin (tcp://HOST:PORT, or HOST:PORT), else the one the RM's own configuration binds
// (--config / --ducc, with its CURVE server key), else $RMBUS_ADMIN, else tcp://127.0.0.1:5562. A read sent to
// an HA standby is sent again to the active the standby names, and says so on stderr.
// With CURVE (docs/bus.md, "Security"): --key is this admin's key pair (rmbus-keygen), --server-key the RM's
// public key; the RM admits admin keys only.
//
// Exit status: 0 full success, 5 partial success (some nodes varied and others unknown; some pools answered),
// 1 refused (the RM answered with an error and did nothing), 2 usage error, 3 no answer within the timeout,
// 4 the RM refused this key (CURVE), 6 a pool restarting (its fresh scheduler has not scheduled a round yet).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <variant>
#include <vector>
#include <zmq.hpp>

#include "bus/curve.hpp"
#include "config/config_error.hpp"
#include "messages/admin.hpp"
#include "messages/topics.hpp"
#include "messages/workmap.hpp"
#include "tools/admin/admin_output.hpp"
#include "tools/admin/command_names.hpp"
#include "tools/common/rm_discovery.hpp"
#include "tools/common/version_flag.hpp"

namespace msg = rmbus::messages;
namespace out = rmbus::tools::admin;

namespace {

// A failure before any reply: printed on stderr, and as JSON on stdout with --json.
int client_failure(bool json, int code, const std::string& error) {
  std::cerr << "rmbus-admin: " << error << "\n";
  if (json) std::cout << out::json_of_client_error(error);
  return code;
}

struct no_reply {
  int code = out::exit_no_answer;
  std::string error;
};

// Where the RM is and how to reach it.
struct rm_address {
  std::string endpoint;
  std::string source;  // "--admin", "$RMBUS_ADMIN", "FILE (native)", "the default", "the standby's redirect"
  std::optional<rmbus::bus::curve_client> curve;
  std::string key_file;  // for the words of a refused key
  int timeout_ms = 5000;
};

// One request, one reply (or why none came).
std::variant<msg::admin_reply, no_reply> exchange(zmq::context_t& ctx, const rm_address& rm, const std::string& body) {
  zmq::socket_t sock{ctx, zmq::socket_type::req};
  sock.set(zmq::sockopt::linger, 0);
  sock.set(zmq::sockopt::sndtimeo, rm.timeout_ms);
  // With CURVE, a monitor reports a refused handshake, so a refused key is told apart from a silent RM.
  std::optional<zmq::socket_t> events;
  static int monitors = 0;
  const auto monitor = "inproc://rmbus-admin.monitor." + std::to_string(++monitors);
  try {
    if (rm.curve) {
      rmbus::bus::apply_curve_client(sock, *rm.curve);
      if (zmq_socket_monitor(sock.handle(), monitor.c_str(), ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
        throw zmq::error_t{};
      events.emplace(ctx, zmq::socket_type::pair);
      events->connect(monitor);
    }
    sock.connect(rm.endpoint);
  } catch (const zmq::error_t& e) {
    return no_reply{out::exit_usage,
                    "cannot connect to " + rm.endpoint + ": " + e.what() + " (expected tcp://HOST:PORT)"};
  }
  // What a silent RM gets: where the endpoint came from, and how to name the right one.
  const auto silent = [&](const std::string& what) {
    return "no answer from " + rm.endpoint + " (" + rm.source + ") within " + std::to_string(rm.timeout_ms) +
           " ms" + what +
           ": is rmbus running, and is that its admin endpoint (rmbus --admin, [bus] admin)? --config FILE or "
           "--ducc FILE finds it as the RM's own configuration binds it";
  };
  if (!sock.send(zmq::buffer(body), zmq::send_flags::none)) return no_reply{out::exit_no_answer, silent(" (send)")};
  zmq::message_t reply;
  std::vector<zmq::pollitem_t> items{{sock.handle(), 0, ZMQ_POLLIN, 0}};
  if (events) items.push_back({events->handle(), 0, ZMQ_POLLIN, 0});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(rm.timeout_ms);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || zmq::poll(items, std::max(left, std::chrono::milliseconds(1))) == 0)
      return no_reply{out::exit_no_answer, silent("")};
    if (items.size() > 1 && (items[1].revents & ZMQ_POLLIN) != 0)
      return no_reply{out::exit_key_refused, rm.endpoint + " refused this key (--key " + rm.key_file +
                                                 "): it is not listed as an admin key there"};
    if ((items[0].revents & ZMQ_POLLIN) != 0 && sock.recv(reply, zmq::recv_flags::dontwait)) break;
  }
  auto rep = msg::decode_admin_reply(msg::topics::admin, reply.to_string_view());
  if (!rep) return no_reply{out::exit_refused, "unreadable reply: " + rep.error().message()};
  return std::move(rep.value());
}

// Reads answer from any RM: a standby sends them on to the active (docs/admin.md, "High availability").
bool is_read(const std::string& cmd) {
  return cmd == "qload" || cmd == "qoccupancy" || cmd == "explain" || cmd == "whatif" || cmd == "jobs" ||
         cmd == "users";
}

// The active's admin endpoint a standby named in its refusal; empty when the reply is not such a refusal.
std::string redirect_of(const msg::admin_reply& r) {
  if (r.ok) return {};
  auto role = r.results.find("role");
  auto to = r.results.find("active_admin");
  if (role == r.results.end() || to == r.results.end()) return {};
  const auto* s = role->second.as_string();
  const auto* ep = to->second.as_string();
  return s != nullptr && *s == "standby" && ep != nullptr ? *ep : std::string{};
}

std::string active_of(const msg::admin_reply& r) {
  auto it = r.results.find("active");
  const auto* s = it == r.results.end() ? nullptr : it->second.as_string();
  return s != nullptr ? *s : std::string{"the active"};
}

}  // namespace

int main(int argc, char** argv) {
  std::string endpoint;
  std::string native, ducc;
  int timeout_ms = 5000;
  bool json = false, details = false;
  std::vector<std::string> nodes;
  std::string job;
  msg::work_item w;
  std::string kind = "job";
  std::string key_file;
  std::string server_key_file;
  w.id = "whatif";
  w.submitted_ms = 0;

  // A misspelt command gets its nearest name before CLI11 would say only "A subcommand is required".
  const std::vector<std::string> words(argv + 1, argv + argc);
  if (const auto word = out::subcommand_word(words))
    if (const auto problem = out::unknown_command_message(*word)) {
      std::cerr << "rmbus-admin: " << *problem << "\n";
      return out::exit_usage;
    }

  CLI::App app{"rmbus-admin: talks to the RM's admin endpoint (docs/admin.md)"};
  rmbus::tools::add_version_flag(app, "rmbus-admin");

  // The global options are taken after the command too (rmbus-admin whatif ... --json).
  app.fallthrough();
  auto* admin_opt =
      app.add_option("--admin", endpoint,
                     "the RM's admin endpoint, tcp://HOST:PORT or HOST:PORT (default: from --config/--ducc, else "
                     "$RMBUS_ADMIN, else tcp://127.0.0.1:5562)");
  auto* native_opt = app.add_option("--config", native, "find the RM as its native configuration binds it")
                         ->check(CLI::ExistingFile)
                         ->excludes(admin_opt);
  app.add_option("--ducc", ducc, "find the RM as its ducc.properties binds it")
      ->check(CLI::ExistingFile)
      ->excludes(admin_opt)
      ->excludes(native_opt);
  app.add_option("--timeout-ms", timeout_ms, "how long to wait for the reply")->capture_default_str()->check(CLI::Range(1, 600000));
  app.add_option("--key", key_file, "CURVE: this admin's key pair file (rmbus-keygen)");
  app.add_option("--server-key", server_key_file,
                 "CURVE: the RM's public key file (default with --config/--ducc: the RM's)");
  app.add_flag("--json", json, "print the reply as one JSON object (schema: docs/admin.md)");
  app.add_flag("--details", details, "qoccupancy: list every share under the table");
  app.require_subcommand(1);
  auto* status = app.add_subcommand("status", "the RM's state: version, last round, nodes, jobs, pools, HA peers");
  std::string pool, state, node_pattern, user, class_name;
  auto* qload =
      app.add_subcommand("qload", "demand and awards by class and order, per pool (DUCC's rm_qload)");
  qload->add_option("--pool", pool, "one top-level nodepool");
  auto* qocc =
      app.add_subcommand("qoccupancy", "one row per node: state, quanta, free quanta, jobs (rm_qoccupancy)");
  qocc->add_option("--pool", pool, "one top-level nodepool");
  qocc->add_option("--state", state, "up, varied_off, down, blacklisted, drained, quiesced or never_seen");
  qocc->add_option("--node", node_pattern, "node names matching a shell pattern (a*, n0[1-4])");
  auto* jobs = app.add_subcommand("jobs", "one row per job: user, class, pool, state, processes (squeue-like)");
  auto* users = app.add_subcommand("users", "one row per user: jobs, processes, quanta");
  for (auto* s : {jobs, users}) {
    s->add_option("--user", user, "only this user's jobs");
    s->add_option("--class", class_name, "only this class's jobs");
    s->add_option("--state", state, "scheduled, pending or refused");
  }
  auto* reconf = app.add_subcommand("reconfigure", "reload the configuration and recover");
  auto* off = app.add_subcommand("vary-off", "make nodes unschedulable (fair-share work is evicted)");
  off->add_option("nodes", nodes, "node names")->required();
  auto* on = app.add_subcommand("vary-on", "make varied-off nodes schedulable again");
  on->add_option("nodes", nodes, "node names")->required();
  auto* drain = app.add_subcommand("drain", "no new work on nodes; what runs there finishes (Slurm's DRAIN)");
  drain->add_option("nodes", nodes, "node names")->required();
  auto* undrain = app.add_subcommand("undrain", "make drained nodes schedulable again");
  undrain->add_option("nodes", nodes, "node names")->required();
  auto* explain = app.add_subcommand("explain", "the numbers behind a job's count");
  explain->add_option("job", job, "job id")->required();
  std::string handover_to;
  auto* handover = app.add_subcommand("handover", "HA: the active RM steps down and a standby takes over at once");
  handover->add_option("--to", handover_to, "the standby's instance name (default: the best standby heard)");
  auto* whatif = app.add_subcommand("whatif", "what a hypothetical work item would get now (nothing changes)");
  whatif->add_option("--id", w.id, "work id")->capture_default_str();
  whatif->add_option("--user", w.user, "user")->required();
  whatif->add_option("--class", w.class_name, "class (empty: the default for its kind)");
  whatif->add_option("--kind", kind, "job, service, ap, reservation")->capture_default_str();
  whatif->add_option("--memory-mb", w.memory_mb, "memory per process, MB")->required();
  whatif->add_option("--max-processes", w.max_processes, "0 = no limit");
  whatif->add_option("--items", w.items_total, "work items in the job");
  whatif->add_option("--item-ms", w.item_ms, "mean time per work item, ms (with --items: an end estimate)");
  whatif->add_option("--threads", w.threads, "work items each process runs at once (0: the configured default)");
  // DUCC's names (and the wire's) for the same commands.
  for (const auto& c : out::command_names())
    for (auto* s : {status, qload, qocc, reconf, off, on, explain, whatif})
      if (s->get_name() == c.name)
        for (const auto& a : c.aliases) s->alias(a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : out::exit_usage;
  }
  // A state misspelt gets its nearest name, as a command does.
  if (!state.empty()) {
    const auto& allowed = qocc->parsed() ? out::node_states() : out::job_states();
    if (const auto problem = out::unknown_value_message("--state", state, allowed))
      return client_failure(json, out::exit_usage, *problem);
  }

  // Where the RM is: --admin, else its own configuration, else the environment, else the default.
  rm_address rm;
  rm.timeout_ms = timeout_ms;
  rm.key_file = key_file;
  std::string endpoint_source = "--admin";
  if (endpoint.empty() && (!native.empty() || !ducc.empty())) {
    try {
      const auto found = rmbus::tools::endpoints_of_configuration(native, ducc);
      endpoint = found.admin;
      endpoint_source = found.source;
      if (found.curve && server_key_file.empty()) server_key_file = found.admin_server_key;
      if (found.curve && key_file.empty())
        return client_failure(
            json, out::exit_usage,
            found.source + " has CURVE on: give this admin's key pair with --key FILE (rmbus-keygen)");
    } catch (const rmbus::config::config_error& e) {
      std::string all;
      for (const auto& i : e.issues())
        all += "\n  " + i.file + (i.line > 0 ? ":" + std::to_string(i.line) : "") + ": " + i.message;
      return client_failure(json, out::exit_usage, "cannot read the RM's configuration:" + all);
    } catch (const std::exception& e) {
      return client_failure(json, out::exit_usage,
                            std::string{"cannot read the RM's configuration: "} + e.what());
    }
  }
  if (endpoint.empty()) {
    if (auto env = rmbus::tools::environment("RMBUS_ADMIN")) {
      endpoint = *env;
      endpoint_source = "$RMBUS_ADMIN";
    } else {
      endpoint = "tcp://127.0.0.1:5562";
      endpoint_source = "the default";
    }
  }
  endpoint = rmbus::tools::with_tcp_scheme(endpoint);
  if (auto problem = rmbus::tools::endpoint_problem(
          endpoint_source == "--admin" ? "--admin" : endpoint_source, endpoint))
    return client_failure(json, out::exit_usage, *problem);
  rm.endpoint = endpoint;
  rm.source = endpoint_source;

  msg::admin_request req;
  if (status->parsed()) req.cmd = "status";
  if (qload->parsed() || qocc->parsed()) {
    req.cmd = qload->parsed() ? "qload" : "qoccupancy";
    if (!pool.empty()) req.args["pool"] = msg::value{pool};
    if (!state.empty()) req.args["state"] = msg::value{state};
    if (!node_pattern.empty()) req.args["node"] = msg::value{node_pattern};
  }
  if (jobs->parsed() || users->parsed()) {
    req.cmd = jobs->parsed() ? "jobs" : "users";
    if (!user.empty()) req.args["user"] = msg::value{user};
    if (!class_name.empty()) req.args["class"] = msg::value{class_name};
    if (!state.empty()) req.args["state"] = msg::value{state};
  }
  if (reconf->parsed()) req.cmd = "reconfigure";
  if (handover->parsed()) {
    req.cmd = "handover";
    if (!handover_to.empty()) req.args["to"] = msg::value{handover_to};
  }
  if (off->parsed() || on->parsed() || drain->parsed() || undrain->parsed()) {
    req.cmd = off->parsed() ? "vary_off" : on->parsed() ? "vary_on" : drain->parsed() ? "drain" : "undrain";
    msg::value::array list;
    for (const auto& n : nodes) list.emplace_back(n);
    req.args["nodes"] = msg::value{std::move(list)};
  }
  if (explain->parsed()) {
    req.cmd = "explain";
    req.args["job"] = msg::value{job};
  }
  if (whatif->parsed()) {
    req.cmd = "whatif";
    auto k = msg::parse_work_kind(kind);
    if (!k) return client_failure(json, out::exit_usage, "--kind must be job, service, ap or reservation");
    w.kind = *k;
    auto v = msg::decode_value("admin", msg::encode_work_item(w));
    if (!v) return client_failure(json, out::exit_usage, v.error().message());
    req.args["work"] = std::move(v.value());
  }

  try {
    rm.curve = rmbus::bus::load_curve_client(key_file, server_key_file);
  } catch (const rmbus::bus::curve_error& e) {
    return client_failure(json, out::exit_usage, e.what());
  }
  zmq::context_t ctx;
  msg::envelope env;
  env.seq = 1;
  env.src = "rmbus-admin";
  const auto body = msg::encode(env, req);
  auto answered = exchange(ctx, rm, body);
  if (auto* failed = std::get_if<no_reply>(&answered)) return client_failure(json, failed->code, failed->error);
  auto r = std::get<msg::admin_reply>(std::move(answered));
  // A read on an HA standby: asked again of the active it names, once (never a chain of redirects).
  std::string redirected_from;
  if (const auto active = redirect_of(r); !active.empty() && is_read(req.cmd)) {
    redirected_from = rm.endpoint;
    const auto instance = active_of(r);
    rm.endpoint = rmbus::tools::with_tcp_scheme(active);
    rm.source = "the active " + instance + ", named by the standby " + redirected_from;
    answered = exchange(ctx, rm, body);
    if (auto* failed = std::get_if<no_reply>(&answered)) return client_failure(json, failed->code, failed->error);
    r = std::get<msg::admin_reply>(std::move(answered));
    // Said on stderr for people; in the JSON as two keys (stderr stays silent for a reply there).
    if (!json)
      std::cerr << "rmbus-admin: " << redirected_from << " is a standby; answered by the active " << instance
                << " at " << rm.endpoint << "\n";
    r.results["answered_by"] = msg::value{rm.endpoint};
    r.results["redirected_from"] = msg::value{redirected_from};
  }
  const auto result = out::outcome_of(req.cmd, r);
  if (json) {
    std::cout << out::json_of(r);
  } else {
    const auto now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    std::cout << out::text_of(req.cmd, r, details, now_ms);
    if (result == out::outcome::partial) std::cerr << "rmbus-admin: partial success: " << r.error << "\n";
    if (result == out::outcome::refused) std::cerr << "rmbus-admin: error: " << r.error << "\n";
    if (result == out::outcome::restarting) std::cerr << "rmbus-admin: " << r.error << "\n";
  }
  return out::exit_code(result);
}
