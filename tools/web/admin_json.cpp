#include "tools/web/admin_json.hpp"

namespace rmbus::web {

void write_value(json_writer& w, const messages::value& v) {
  using k = messages::value::kind;
  switch (v.type()) {
    case k::nil:
      w.null();
      return;
    case k::boolean:
      w.value(*v.as_bool());
      return;
    case k::integer:
      w.value(*v.as_int());
      return;
    case k::unsigned_integer:
      w.value(*v.as_uint());
      return;
    case k::floating:
      w.value(*v.as_double());
      return;
    case k::string:
      w.value(*v.as_string());
      return;
    case k::array:
      w.begin_array();
      for (const auto& e : *v.as_array()) write_value(w, e);
      w.end_array();
      return;
    case k::map:
      w.begin_object();
      for (const auto& [key, e] : *v.as_map()) {
        w.key(key);
        write_value(w, e);
      }
      w.end_object();
      return;
  }
}

json_response admin_response(const admin_outcome& outcome) {
  json_writer w;
  w.begin_object();
  if (!outcome.reply) {
    w.member("ok", false).member("error", outcome.error).end_object();
    const bool silent = outcome.error.rfind("no answer", 0) == 0;
    return {silent ? 504 : 502, w.take()};
  }
  const auto& r = *outcome.reply;
  w.member("ok", r.ok);
  if (!r.ok) w.member("error", r.error);
  w.key("results").begin_object();
  for (const auto& [key, v] : r.results) {
    w.key(key);
    write_value(w, v);
  }
  w.end_object().end_object();
  return {200, w.take()};
}

}  // namespace rmbus::web
