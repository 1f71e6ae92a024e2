#pragma once
// What publication knows of every node, and rm.nodes built from it: the intake's node table (a replica kept
// from numbered changes, actors/node_replica.hpp) merged with what each pool's plans say of its machines
// (state, quanta, free quanta; a plan lists the machines that changed, or all of them). The overbooking
// guard reads each node's order from here too.
//
// rm.nodes goes out after every round, and a round that answers one change touches a few nodes: the report is
// kept between publications and only the entries of nodes named since (by an intake batch, by a plan's
// machines) are rebuilt, and packed again (rm_nodes::encoded_nodes: encoding rm.nodes then copies the other
// entries' bytes). A node that joins or leaves the table, a snapshot or a plan that lists every machine
// rebuilds it whole (build_report). The report is shared with the bus publisher that encodes it; one still in
// its hands is copied before it is changed, never changed under it.
//
// Built without CAF so that it can be tested alone.
//
// Not thread-safe; one owner (publication).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/node_replica.hpp"
#include "messages/internal/payload.hpp"
#include "messages/rm_nodes.hpp"

namespace rmbus::actors {

// What rm.nodes says of a node: the intake's liveness first (down, missing), then what its pool's plan says.
// Either may be absent (a node no plan listed yet; a machine the intake does not know).
messages::node_state node_state_of(const messages::machine_summary* m, const messages::node_entry* e);

class node_report_table {
 public:
  // The intake's batches and snapshots, by node_replica's rules. The machines of nodes the intake forgot go
  // too: their pools' schedulers removed them first (the intake asks them), and rm.nodes no longer lists them.
  node_replica::outcome apply(const std::string& src, const messages::node_changes& batch,
                              std::vector<liveness_change>& changes);
  node_replica::outcome apply(const std::string& src, const messages::node_snapshot& snap,
                              std::vector<liveness_change>& changes);

  // A pool's plan: its machines that changed, or all of them (machines_complete).
  void take_machines(const messages::pool_plan& plan);

  // A node's order as the pools' plans report it (nothing for a node no plan listed yet).
  std::optional<std::uint64_t> order_of(std::string_view node) const;
  // What a pool's plan last said of a node, whichever pool (nullptr: none did).
  const messages::machine_summary* machine(std::string_view node) const;

  const node_replica& liveness() const { return liveness_; }

  // rm.nodes as of now (a messages::rm_nodes), brought up to date with what changed since the last call.
  std::shared_ptr<const messages::payload> report();

  // rm.nodes built afresh: every node the intake knows, in name order, with what its pool's plans say of it,
  // and the machines a pool holds that the intake does not know (a replica not yet in step), all sorted by
  // name. report() equals it.
  messages::rm_nodes build_report() const;

 private:
  // Heterogeneous lookup: a node named by a string_view (a share's node in the guard) is found without a copy.
  struct name_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using machine_table = std::unordered_map<std::string, messages::machine_summary, name_hash, std::equal_to<>>;

  void forget_machines(const std::vector<liveness_change>& changes);
  // Notes that `node`'s entry may have changed: rebuilt alone when the report lists it, else the report is.
  void touch(const std::string& node);
  // The entry of a node the intake knows (nullopt when it does not: the report is then rebuilt).
  std::optional<messages::node_report> entry_of(const std::string& node) const;

  node_replica liveness_;
  std::map<std::string, machine_table, std::less<>> machines_;  // pool -> node -> summary
  std::unordered_map<std::string, std::uint64_t, name_hash, std::equal_to<>> node_order_;  // as in machines_
  std::shared_ptr<messages::payload> report_;  // the last rm.nodes handed out
  std::unordered_map<std::string, std::size_t> position_;  // node -> its entry in report_
  std::vector<std::string> touched_;  // nodes named since report_ was made
  bool rebuild_ = true;
};

}  // namespace rmbus::actors
