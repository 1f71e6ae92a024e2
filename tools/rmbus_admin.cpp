// rmbus-admin: the admin client. Sends one request to the RM's admin endpoint (ZeroMQ REQ, one frame of
// MessagePack: `cmd` plus arguments) and prints the reply readably.
//
//   rmbus-admin [--admin tcp://127.0.0.1:5562] [--timeout-ms 5000] [--key FILE --server-key FILE] COMMAND [ARGS]
//     status | qload | qoccupancy | reconfigure
//     vary-off NODE... | vary-on NODE...
//     explain JOB        (with a running job's estimated end, pending work's estimated start)
//     whatif --user U [--class C] [--kind job] --memory-mb M [--max-processes N] [--id ID]
//            [--items N [--item-ms MS] [--threads T]]
//     handover [--to INSTANCE]   (HA: the active stops publishing; the named or best standby takes over)
//
// With CURVE (docs/bus.md, "Security"): --key is this admin's key pair (rmbus-keygen), --server-key the RM's
// public key; the RM admits admin keys only.
//
// Exit status: 0 when the RM answered ok, 1 when it answered with an error, 2 for a usage error, 3 when no
// answer came within the timeout, 4 when the RM refused this key (CURVE).

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <zmq.hpp>

#include "bus/curve.hpp"

#include "messages/admin.hpp"
#include "messages/topics.hpp"
#include "messages/workmap.hpp"

namespace msg = rmbus::messages;

namespace {

void print(const msg::value& v, int indent);

void print_map(const msg::value::map& m, int indent) {
  for (const auto& [k, v] : m) {
    std::cout << std::string(static_cast<std::size_t>(indent), ' ') << k << ":";
    if (v.as_map() != nullptr || (v.as_array() != nullptr && !v.as_array()->empty() && v.as_array()->front().as_map())) {
      std::cout << "\n";
      print(v, indent + 2);
    } else if (const auto* s = v.as_string(); s != nullptr && s->find('\n') != std::string::npos) {
      std::cout << "\n";
      std::size_t start = 0;
      while (start < s->size()) {
        auto end = s->find('\n', start);
        if (end == std::string::npos) end = s->size();
        std::cout << std::string(static_cast<std::size_t>(indent + 2), ' ') << s->substr(start, end - start) << "\n";
        start = end + 1;
      }
    } else {
      std::cout << " " << msg::to_text(v) << "\n";
    }
  }
}

void print(const msg::value& v, int indent) {
  if (const auto* m = v.as_map()) {
    print_map(*m, indent);
  } else if (const auto* a = v.as_array()) {
    for (const auto& e : *a) {
      std::cout << std::string(static_cast<std::size_t>(indent), ' ') << "-\n";
      print(e, indent + 2);
    }
  } else {
    std::cout << std::string(static_cast<std::size_t>(indent), ' ') << msg::to_text(v) << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string endpoint = "tcp://127.0.0.1:5562";
  int timeout_ms = 5000;
  std::vector<std::string> nodes;
  std::string job;
  msg::work_item w;
  std::string kind = "job";
  std::string key_file;
  std::string server_key_file;
  w.id = "whatif";
  w.submitted_ms = 0;

  CLI::App app{"rmbus-admin: talks to the RM's admin endpoint"};
  app.add_option("--admin", endpoint, "the RM's admin endpoint")->capture_default_str();
  app.add_option("--timeout-ms", timeout_ms, "how long to wait for the reply")->capture_default_str()->check(CLI::Range(1, 600000));
  app.add_option("--key", key_file, "CURVE: this admin's key pair file (rmbus-keygen)");
  app.add_option("--server-key", server_key_file, "CURVE: the RM's public key file");
  app.require_subcommand(1);
  auto* status = app.add_subcommand("status", "the RM's state: instance, last round, pools");
  auto* qload = app.add_subcommand("qload", "demand and awards by class and order, per pool");
  auto* qocc = app.add_subcommand("qoccupancy", "every node: state, quanta, free quanta, shares");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

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
    if (!k) {
      std::cerr << "rmbus-admin: --kind must be job, service, ap or reservation\n";
      return 2;
    }
    w.kind = *k;
    auto v = msg::decode_value("admin", msg::encode_work_item(w));
    if (!v) {
      std::cerr << "rmbus-admin: " << v.error().message() << "\n";
      return 2;
    }
    req.args["work"] = std::move(v.value());
  }

  std::optional<rmbus::bus::curve_client> curve;
  try {
    curve = rmbus::bus::load_curve_client(key_file, server_key_file);
  } catch (const rmbus::bus::curve_error& e) {
    std::cerr << "rmbus-admin: " << e.what() << "\n";
    return 2;
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
    std::cerr << "rmbus-admin: cannot connect to " << endpoint << ": " << e.what() << "\n";
    return 2;
  }
  msg::envelope env;
  env.seq = 1;
  env.src = "rmbus-admin";
  const auto body = msg::encode(env, req);
  if (!sock.send(zmq::buffer(body), zmq::send_flags::none)) {
    std::cerr << "rmbus-admin: no answer from " << endpoint << " within " << timeout_ms << " ms (send)\n";
    return 3;
  }
  zmq::message_t reply;
  std::vector<zmq::pollitem_t> items{{sock.handle(), 0, ZMQ_POLLIN, 0}};
  if (events) items.push_back({events->handle(), 0, ZMQ_POLLIN, 0});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || zmq::poll(items, std::max(left, std::chrono::milliseconds(1))) == 0) {
      std::cerr << "rmbus-admin: no answer from " << endpoint << " within " << timeout_ms << " ms\n";
      return 3;
    }
    if (items.size() > 1 && (items[1].revents & ZMQ_POLLIN) != 0) {
      std::cerr << "rmbus-admin: " << endpoint << " refused this key (--key " << key_file
                << "): it is not listed as an admin key there\n";
      return 4;
    }
    if ((items[0].revents & ZMQ_POLLIN) != 0 && sock.recv(reply, zmq::recv_flags::dontwait)) break;
  }
  auto rep = msg::decode_admin_reply(msg::topics::admin, reply.to_string_view());
  if (!rep) {
    std::cerr << "rmbus-admin: unreadable reply: " << rep.error().message() << "\n";
    return 1;
  }
  std::cout << (rep.value().ok ? "ok" : "error: " + rep.value().error) << "\n";
  print_map(rep.value().results, 2);
  return rep.value().ok ? 0 : 1;
}
