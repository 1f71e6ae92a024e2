// messages/utf8.hpp: the one strict UTF-8 check of the wire side, and the sequence lengths the accounting's
// JSON lines step through.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "messages/utf8.hpp"

using rmbus::messages::utf8_sequence_length;
using rmbus::messages::valid_utf8;

TEST_CASE("utf8_sequence_length gives each valid sequence's length and 0 for every kind of bad byte", "[messages][utf8]") {
  CHECK(utf8_sequence_length("a", 0) == 1);
  CHECK(utf8_sequence_length("\xc3\xa9", 0) == 2);          // é, U+00E9
  CHECK(utf8_sequence_length("\xe2\x82\xac", 0) == 3);      // €, U+20AC
  CHECK(utf8_sequence_length("\xf0\x9f\x98\x80", 0) == 4);  // U+1F600
  CHECK(utf8_sequence_length("x\xc3\xa9", 1) == 2);         // from the middle of a string
  CHECK(utf8_sequence_length("\xa9", 0) == 0);              // a continuation byte where a sequence starts
  CHECK(utf8_sequence_length("\xff", 0) == 0);              // never in UTF-8
  CHECK(utf8_sequence_length("\xe2\x82", 0) == 0);          // truncated
  CHECK(utf8_sequence_length("\xc3\x41", 0) == 0);          // the second byte is not a continuation
  CHECK(utf8_sequence_length("\xc0\xaf", 0) == 0);          // overlong '/'
  CHECK(utf8_sequence_length("\xe0\x80\xaf", 0) == 0);      // overlong '/' in three bytes
  CHECK(utf8_sequence_length("\xed\xa0\x80", 0) == 0);      // U+D800, a UTF-16 surrogate
  CHECK(utf8_sequence_length("\xf4\x90\x80\x80", 0) == 0);  // U+110000, past the last code point
  CHECK(utf8_sequence_length("\xf4\x8f\xbf\xbf", 0) == 4);  // U+10FFFF, the last code point
}

TEST_CASE("valid_utf8 accepts whole valid strings only", "[messages][utf8]") {
  CHECK(valid_utf8(""));
  CHECK(valid_utf8("node-\xc3\xa9t\xc3\xa9"));
  CHECK_FALSE(valid_utf8("node-\xc3"));  // cut inside its last sequence
  CHECK_FALSE(valid_utf8("ok\xed\xa0\x80ok"));
}

TEST_CASE("valid_utf8 judges a sequence the same wherever it falls against the eight-byte ASCII runs",
          "[messages][utf8]") {
  // valid_utf8 skips ASCII eight bytes at a time: a sequence at any offset, cut at the end of the string or
  // straddling a word, must still be seen (the reference steps sequence by sequence).
  const auto by_sequence = [](std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
      const auto n = utf8_sequence_length(s, i);
      if (n == 0) return false;
      i += n;
    }
    return true;
  };
  for (const std::string seq : {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xa9", "\xff", "\xe2\x82",
                                "\xc0\xaf", "\xed\xa0\x80", "\x80"}) {
    for (std::size_t before = 0; before < 20; ++before) {
      for (std::size_t after = 0; after < 12; ++after) {
        const auto s = std::string(before, 'a') + seq + std::string(after, 'b');
        INFO("sequence of " << seq.size() << " bytes after " << before << " ASCII, before " << after);
        CHECK(valid_utf8(s) == by_sequence(s));
      }
    }
  }
  CHECK(valid_utf8(std::string(64, 'z')));
  CHECK_FALSE(valid_utf8(std::string(63, 'z') + "\xc3"));
}
