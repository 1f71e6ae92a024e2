#pragma once
// Internal: the codecs of entries that more than one message carries, so that each has one definition:
// a work item (orchestrator.workmap, rm.internal.work.<pool>, admin whatif) and a job's schedule (rm.state,
// rm.internal.plan). Only messages/*.cpp include this.

#include "messages/detail/codec.hpp"
#include "messages/rm_state.hpp"
#include "messages/workmap.hpp"

namespace rmbus::messages::detail {

void pack_work_item(packer& pk, const work_item& w);
void read_work_item(const msgpack::object& o, const path& at, work_item& w);

void pack_job_schedule(packer& pk, const job_schedule& j);
void read_job_schedule(const msgpack::object& o, const path& at, job_schedule& j);

// A map of string keys to unsigned integers (per-user MB), keys valid UTF-8.
void pack_uint_map(packer& pk, const std::map<std::string, std::uint64_t>& m);
void read_uint_map(const msgpack::object& o, const path& at, std::map<std::string, std::uint64_t>& m);

}  // namespace rmbus::messages::detail
