#pragma once
// rm.internal.query.<pool> — admin -> the scheduler of one top-level nodepool: one admin command (qload,
// qoccupancy, explain, whatif) with its arguments.
// rm.internal.answer — a pool scheduler or eviction -> admin: the answer to query `qid`.
//
// Admin commands are rare and their arguments and results vary by command, so both carry value maps
// (messages/value.hpp), as the admin channel itself does; nothing here runs per heartbeat or per round.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/envelope.hpp"
#include "messages/result.hpp"
#include "messages/value.hpp"

namespace rmbus::messages {

struct admin_query {
  std::uint64_t qid = 0;
  std::string cmd;
  value::map args;

  friend bool operator==(const admin_query&, const admin_query&) = default;
};

struct admin_answer {
  std::uint64_t qid = 0;
  std::string from;  // the pool's name, or "eviction"
  value::map result;

  friend bool operator==(const admin_answer&, const admin_answer&) = default;
};

std::string encode(const envelope& env, const admin_query& msg);
result<admin_query> decode_admin_query(std::string_view topic, std::string_view body, const decode_limits& limits = {},
                                       envelope* env_out = nullptr);
std::string encode(const envelope& env, const admin_answer& msg);
result<admin_answer> decode_admin_answer(std::string_view topic, std::string_view body,
                                         const decode_limits& limits = {}, envelope* env_out = nullptr);

}  // namespace rmbus::messages
