#pragma once
// The admin endpoint's answers as the JSON the page reads: {"ok": bool, "error": str, "results": {...}} with
// the reply's result keys as they came (docs/protocol.md section 5.4 for explain), values converted one to one
// (MessagePack map -> object, array -> array, str/int/uint/float/bool/nil -> the same in JSON).
//
// Thread-safety: pure functions.

#include "messages/value.hpp"
#include "tools/web/admin_client.hpp"
#include "tools/web/json_writer.hpp"
#include "tools/web/web_server.hpp"

namespace rmbus::web {

void write_value(json_writer& w, const messages::value& v);

// 200 with the reply when one came (ok or not: the RM's own error is the page's to show); 504 when the RM did
// not answer; 502 for a refused key or an unreadable reply.
json_response admin_response(const admin_outcome& outcome);

}  // namespace rmbus::web
