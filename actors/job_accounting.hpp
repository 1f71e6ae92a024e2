#pragma once
// Job accounting (Maui's JobChecker): what each finished job held, as one record. The arithmetic behind the
// accounting actor (actors/accounting.cpp), without CAF.
//
// Decides:
//  - when a job has finished: it was in the previous round's work (the pools' slices of the work map) and is
//    now gone from it, or it turned `completed` (the record is written once; a completed item lingering in
//    the map is not counted again). A job never seen alive (e.g. completed before this RM started) leaves no
//    record. Work refused before it reached any pool (unknown class) is not accounted: it held nothing.
//  - quanta-seconds held: the integral of the quanta of the shares the published schedule lists for the job
//    (every listed share, `preempt` and `evict` ones included: they occupy their space until the process
//    ends), from one rm.state to the next, and from the last rm.state to the round that saw the job finish:
//      quanta_ms += quanta listed at t_prev x (t - t_prev)
//    kept in integer quanta x milliseconds, shown as seconds with three decimals;
//  - processes: distinct shares the job was given (a share id not listed for it in the previous rm.state);
//  - preemptions / evictions suffered: shares newly listed as `preempt` / `evict`;
//  - times (ms since the epoch): submitted as the work map says, started at the first rm.state listing a
//    share for it (0: it never ran), finished at the round that saw it finish;
//  - from_start: whether the accounting saw the job before any of its processes ran (its first work item
//    listed none). A job already running when the accounting began (an RM restart, or accounting turned on
//    by a reconfiguration) is counted only from then, and its record says so.
// `group` is the share group rm.state names for the job (its user's innermost [[group]] in its class); empty
// when the user is in none.
//
// Time is an input (the rounds' and schedules' timestamps), so the arithmetic is testable and deterministic.
// Memory: one entry per live job and, per job, its currently listed shares.
// Thread-safety: one owner (the accounting actor).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "messages/rm_event.hpp"
#include "messages/rm_state.hpp"
#include "messages/workmap.hpp"

namespace rmbus::actors {

struct job_record {
  std::string id;
  std::string kind;   // job, service, ap, reservation
  std::string user;
  std::string class_name;
  std::string group;  // the share group rm.state names for it; empty: none
  std::string ended;  // "completed" (the map said so) or "gone" (it left the map)
  std::uint64_t quanta_ms = 0;
  std::uint64_t processes = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t evictions = 0;
  std::uint64_t submitted_ms = 0;
  std::uint64_t started_ms = 0;  // 0: never given a share
  std::uint64_t finished_ms = 0;
  // False when the job's processes already ran as the accounting first saw it (the RM restarted, or a
  // reconfiguration turned accounting on): the record then covers only the time since.
  bool from_start = true;

  friend bool operator==(const job_record&, const job_record&) = default;
};

class job_accounting {
 public:
  // The work of one round (every pool's slice together) at `now_ms`: jobs new to it start being tracked, and
  // the records of the jobs that finished since the previous round are returned, in id order.
  std::vector<job_record> take_work(const std::vector<const messages::work_item*>& items, std::uint64_t now_ms);
  // A published schedule (rm.state) at `now_ms`: integrates the quanta held since the last one, counts shares
  // newly given, preempted, evicted.
  void take_schedule(const messages::schedule_listing& jobs, std::uint64_t now_ms);

  std::size_t tracked() const { return jobs_.size(); }

 private:
  struct listed_share {
    std::string id;
    messages::share_status status;
  };
  struct tracked_job {
    job_record rec;
    std::uint64_t quanta = 0;    // quanta listed in the last rm.state
    std::uint64_t since_ms = 0;  // its time (0: not listed yet)
    std::vector<listed_share> shares;  // listed in the last rm.state, in its order
    std::uint64_t round = 0;     // the last round whose work listed it
  };
  static void integrate(tracked_job& j, std::uint64_t now_ms);

  std::map<std::string, tracked_job, std::less<>> jobs_;
  std::uint64_t round_ = 0;
};

// "12.345": quanta x milliseconds as quanta-seconds, exactly, with three decimals.
std::string quanta_seconds_text(std::uint64_t quanta_ms);
// The record as one line of JSON (no newline), fields in a fixed order; strings escaped (control characters,
// quotes, backslashes; bytes that are not valid UTF-8 become U+FFFD), so every line parses.
std::string to_json_line(const job_record& r);
// The same record as an rm.events `job_done` event.
messages::rm_event to_event(const job_record& r);
// A string as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

}  // namespace rmbus::actors
