// rmbus-admin: the admin client. Sends one request to the RM's admin endpoint (ZeroMQ REQ, one frame of
// MessagePack: `cmd` plus arguments) and prints the reply readably.
//
//   rmbus-admin [--admin tcp://127.0.0.1:5562] [--timeout-ms 5000] COMMAND [ARGS]
//     status | qload | qoccupancy | reconfigure
//     vary-off NODE... | vary-on NODE...
//     explain JOB        (with a running job's estimated end, pending work's estimated start)
//     whatif --user U [--class C] [--kind job] --memory-mb M [--max-processes N] [--id ID]
//
// Exit status: 0 when the RM answered ok, 1 when it answered with an error, 2 for a usage error, 3 when no
// answer came within the timeout.

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <zmq.hpp>

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
  w.id = "whatif";
  w.submitted_ms = 0;

  CLI::App app{"rmbus-admin: talks to the RM's admin endpoint"};
  app.add_option("--admin", endpoint, "the RM's admin endpoint")->capture_default_str();
  app.add_option("--timeout-ms", timeout_ms, "how long to wait for the reply")->capture_default_str()->check(CLI::Range(1, 600000));
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
  auto* whatif = app.add_subcommand("whatif", "what a hypothetical work item would get now (nothing changes)");
  whatif->add_option("--id", w.id, "work id")->capture_default_str();
  whatif->add_option("--user", w.user, "user")->required();
  whatif->add_option("--class", w.class_name, "class (empty: the default for its kind)");
  whatif->add_option("--kind", kind, "job, service, ap, reservation")->capture_default_str();
  whatif->add_option("--memory-mb", w.memory_mb, "memory per process, MB")->required();
  whatif->add_option("--max-processes", w.max_processes, "0 = no limit");
  whatif->add_option("--items", w.items_total, "work items in the job");
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

  zmq::context_t ctx;
  zmq::socket_t sock{ctx, zmq::socket_type::req};
  sock.set(zmq::sockopt::linger, 0);
  sock.set(zmq::sockopt::rcvtimeo, timeout_ms);
  sock.set(zmq::sockopt::sndtimeo, timeout_ms);
  try {
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
  if (!sock.recv(reply, zmq::recv_flags::none)) {
    std::cerr << "rmbus-admin: no answer from " << endpoint << " within " << timeout_ms << " ms\n";
    return 3;
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
