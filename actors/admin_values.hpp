#pragma once
// The admin endpoint's answers and arguments as value maps (messages/value.hpp), read and written by the
// actor shells that answer admin commands (admin.cpp, pool_scheduler.cpp).
//
// Admin commands are rare and their shapes vary by command, so they keep value maps end to end; nothing on a
// per-heartbeat, per-work-item or per-round path uses these. Field readers return the default on a missing
// or mistyped key (answers come from our own code, possibly another process of another version: a missing
// field reads as its default, never as a crash).
//
// Thread-safety: free functions over values.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/schedule_plan.hpp"
#include "messages/result.hpp"
#include "messages/value.hpp"
#include "messages/workmap.hpp"

namespace rmbus::actors {

using messages::value;

std::string str_of(const value::map& m, std::string_view key);
std::uint64_t uint_of(const value::map& m, std::string_view key);
bool bool_of(const value::map& m, std::string_view key);
const value::array* array_of(const value::map& m, std::string_view key);
const value::map* map_of(const value::map& m, std::string_view key);

// A wire work item as a value tree (whatif's argument) and back, through the work item's one codec.
value to_value(const messages::work_item& w);
messages::result<messages::work_item> work_item_of(std::string_view topic, const value& v);

// A job's plan shaped like an rm.state job entry, plus `given` and `order` (whatif's answer).
value to_value(const core::job_plan& p);

// A running job's estimated end and pending work's estimated start (explain's and whatif's optional keys).
value to_value(const core::end_estimate& e);
value to_value(const core::start_estimate& e);

// Every machine of a pool with the shares it holds (qoccupancy's answer).
value machines_of(const core::pool_view& v);

}  // namespace rmbus::actors
