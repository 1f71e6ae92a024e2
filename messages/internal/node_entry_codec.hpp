#pragma once
// Internal: one node_entry as a MessagePack map, shared by node_changes and node_snapshot.

#include "messages/detail/codec.hpp"
#include "messages/internal/node_changes.hpp"

namespace rmbus::messages::detail {

void pack_node_entry(packer& pk, const node_entry& e);
void read_node_entry(const msgpack::object& o, const path& at, node_entry& e);

}  // namespace rmbus::messages::detail
