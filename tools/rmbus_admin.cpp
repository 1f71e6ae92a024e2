// rmbus-admin: the admin client. Sends one request to the RM's admin endpoint (ZeroMQ REQ, one frame of
// MessagePack: `cmd` plus arguments) and prints the reply as a compact table, or as JSON (--json); the
// outputs, the JSON schema and the exit codes are in docs/admin.md.
//
//   rmbus-admin [--admin EP | --config FILE | --ducc FILE] [--timeout-ms 5000] [--key FILE --server-key FILE]
//               [--json] [--details] COMMAND [ARGS]
//     status | qload | qoccupancy | reconfigure
//     vary-off NODE... | vary-on NODE...      (DUCC's vary_off / vary_on too)
//     explain JOB        (with a running job's estimated end, pending work's estimated start)
//     whatif --user U [--class C] [--kind job] --memory-mb M [--max-processes N] [--id ID]
//            [--items N [--item-ms MS] [--threads T]]
//     handover [--to INSTANCE]   (HA: the active stops publishing; the named or best standby takes over)
//
// The endpoint: --admin, else the one the RM's own configuration binds (--config / --ducc, with its CURVE
// server key), else $RMBUS_ADMIN, else tcp://127.0.0.1:5562.
// With CURVE (docs/bus.md, "Security"): --key is this admin's key pair (rmbus-keygen), --server-key the RM's
// public key; the RM admits admin keys only.
//
// Exit status: 0 full success, 5 partial success (some nodes varied and others unknown; some pools answered),
// 1 refused (the RM answered with an error and did nothing), 2 usage error, 3 no answer within the timeout,
// 4 the RM refused this key (CURVE).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
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

namespace msg = rmbus::messages;
namespace out = rmbus::tools::admin;

namespace {

// A failure before any reply: printed on stderr, and as JSON on stdout with --json.
int client_failure(bool json, int code, const std::string& error) {
  std::cerr << "rmbus-admin: " << error << "\n";
  if (json) std::cout << out::json_of_client_error(error);
  return code;
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
  auto* admin_opt =
      app.add_option("--admin", endpoint,
                     "the RM's admin endpoint, tcp://HOST:PORT (default: from --config/--ducc, else "
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
  auto* status = app.add_subcommand("status", "the RM's state: instance, last round, pools");
  auto* qload =
      app.add_subcommand("qload", "demand and awards by class and order, per pool (DUCC's rm_qload)");
  auto* qocc =
      app.add_subcommand("qoccupancy", "one row per node: state, quanta, free quanta, jobs (rm_qoccupancy)");
  auto* reconf = app.add_subcommand("reconfigure", "reload the configuration and recover");
  auto* off = app.add_subcommand("vary-off", "make nodes unschedulable (fair-share work is evicted)");
  off->add_option("nodes", nodes, "node names")->required();
  auto* on = app.add_subcommand("vary-on", "make varied-off nodes schedulable again");
  on->add_option("nodes", nodes, "node names")->required();
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

  // Where the RM is: --admin, else its own configuration, else the environment, else the default.
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
  if (auto problem = rmbus::tools::endpoint_problem(
          endpoint_source == "--admin" ? "--admin" : endpoint_source, endpoint))
    return client_failure(json, out::exit_usage, *problem);

  msg::admin_request req;
  if (status->parsed()) req.cmd = "status";
  if (qload->parsed()) req.cmd = "qload";
  if (qocc->parsed()) req.cmd = "qoccupancy";
  if (reconf->parsed()) req.cmd = "reconfigure";
  if (handover->parsed()) {
    req.cmd = "handover";
    if (!handover_to.empty()) req.args["to"] = msg::value{handover_to};
  }
  if (off->parsed() || on->parsed()) {
    req.cmd = off->parsed() ? "vary_off" : "vary_on";
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

  std::optional<rmbus::bus::curve_client> curve;
  try {
    curve = rmbus::bus::load_curve_client(key_file, server_key_file);
  } catch (const rmbus::bus::curve_error& e) {
    return client_failure(json, out::exit_usage, e.what());
  }
  zmq::context_t ctx;
  zmq::socket_t sock{ctx, zmq::socket_type::req};
  sock.set(zmq::sockopt::linger, 0);
  sock.set(zmq::sockopt::sndtimeo, timeout_ms);
  // With CURVE, a monitor reports a refused handshake, so a refused key is told apart from a silent RM.
  std::optional<zmq::socket_t> events;
  try {
    if (curve) {
      rmbus::bus::apply_curve_client(sock, *curve);
      if (zmq_socket_monitor(sock.handle(), "inproc://rmbus-admin.monitor", ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
        throw zmq::error_t{};
      events.emplace(ctx, zmq::socket_type::pair);
      events->connect("inproc://rmbus-admin.monitor");
    }
    sock.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return client_failure(json, out::exit_usage,
                          "cannot connect to " + endpoint + ": " + e.what() + " (expected tcp://HOST:PORT)");
  }
  // What a silent RM gets: where the endpoint came from, and how to name the right one.
  const auto silent = [&](const std::string& what) {
    return "no answer from " + endpoint + " (" + endpoint_source + ") within " + std::to_string(timeout_ms) +
           " ms" + what +
           ": is rmbus running, and is that its admin endpoint (rmbus --admin, [bus] admin)? --config FILE "
           "or "
           "--ducc FILE finds it as the RM's own configuration binds it";
  };
  msg::envelope env;
  env.seq = 1;
  env.src = "rmbus-admin";
  const auto body = msg::encode(env, req);
  if (!sock.send(zmq::buffer(body), zmq::send_flags::none))
    return client_failure(json, out::exit_no_answer, silent(" (send)"));
  zmq::message_t reply;
  std::vector<zmq::pollitem_t> items{{sock.handle(), 0, ZMQ_POLLIN, 0}};
  if (events) items.push_back({events->handle(), 0, ZMQ_POLLIN, 0});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || zmq::poll(items, std::max(left, std::chrono::milliseconds(1))) == 0)
      return client_failure(json, out::exit_no_answer, silent(""));
    if (items.size() > 1 && (items[1].revents & ZMQ_POLLIN) != 0)
      return client_failure(
          json, out::exit_key_refused,
          endpoint + " refused this key (--key " + key_file + "): it is not listed as an admin key there");
    if ((items[0].revents & ZMQ_POLLIN) != 0 && sock.recv(reply, zmq::recv_flags::dontwait)) break;
  }
  auto rep = msg::decode_admin_reply(msg::topics::admin, reply.to_string_view());
  if (!rep) return client_failure(json, out::exit_refused, "unreadable reply: " + rep.error().message());
  const auto& r = rep.value();
  const auto result = out::outcome_of(req.cmd, r);
  if (json) {
    std::cout << out::json_of(r);
  } else {
    std::cout << out::text_of(req.cmd, r, details);
    if (result == out::outcome::partial) std::cerr << "rmbus-admin: partial success: " << r.error << "\n";
    if (result == out::outcome::refused) std::cerr << "rmbus-admin: error: " << r.error << "\n";
  }
  return out::exit_code(result);
}
