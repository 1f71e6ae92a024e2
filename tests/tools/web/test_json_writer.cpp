// The snapshot writer: whatever names arrive off the bus or the admin endpoint, the output is one line of
// valid JSON that reads back as the same text.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tools/web/json_writer.hpp"

using rmbus::web::json_writer;
using nlohmann::json;

TEST_CASE("json_writer: nested objects and arrays get their commas and read back", "[web][json]") {
  json_writer w;
  w.begin_object().member("a", std::uint64_t{1}).member("b", "two").key("c").begin_array();
  w.value(std::int64_t{-3}).value(true).null().begin_object().end_object().begin_array().end_array();
  w.end_array().member("d", 0.5).end_object();
  CHECK(w.str() == R"({"a":1,"b":"two","c":[-3,true,null,{},[]],"d":0.5})");
  const auto j = json::parse(w.str());
  CHECK(j["c"][0] == -3);
  CHECK(j["d"] == 0.5);
}

TEST_CASE("json_writer: hostile names stay valid JSON on one line and read back as sent", "[web][json]") {
  // Quotes, backslashes, control bytes, a line break (which would end a server-sent event) and a closing
  // script tag (which would end a script in a page).
  const std::string name = "a\"b\\c\x01\x1f\n</script>\t\x7f";
  json_writer w;
  w.begin_object().member(name, name).end_object();
  CHECK(w.str().find('\n') == std::string::npos);
  CHECK(w.str().find("</script") == std::string::npos);
  const auto j = json::parse(w.str());
  CHECK(j[name] == name);
}

TEST_CASE("json_writer: bytes that are not UTF-8 become U+FFFD instead of breaking the JSON", "[web][json]") {
  // A lone continuation byte, a truncated 3-byte sequence, an overlong '/', then valid 2- and 4-byte characters.
  const std::string bad = std::string{"x\x80y\xE2\x82"} + "\xC0\xAF" + "\xC3\xA9\xF0\x9F\x98\x80";
  json_writer w;
  w.begin_array().value(bad).end_array();
  const auto j = json::parse(w.str());  // throws on invalid UTF-8
  const std::string back = j[0];
  CHECK(back.rfind("x\xEF\xBF\xBDy", 0) == 0);
  CHECK(back.find("\xC3\xA9\xF0\x9F\x98\x80") != std::string::npos);  // the valid characters kept as they were
}

TEST_CASE("json_writer: non-finite numbers are null, integers are exact to 2^64-1", "[web][json]") {
  json_writer w;
  w.begin_array().value(std::numeric_limits<double>::infinity()).value(std::numeric_limits<double>::quiet_NaN());
  w.value(std::numeric_limits<std::uint64_t>::max()).value(std::numeric_limits<std::int64_t>::min()).end_array();
  CHECK(w.str() == "[null,null,18446744073709551615,-9223372036854775808]");
}
