#pragma once
// Strict UTF-8 as the wire requires it (no overlong forms, no UTF-16 surrogates, nothing above U+10FFFF).
// MessagePack str is UTF-8 by definition and other languages refuse anything else (Python's msgpack raises
// on decode), so a string the RM accepts and later republishes, or writes as JSON, must be valid. The one
// check for the wire side: the codecs, the bus's topic check and the accounting's JSON lines use it. (The
// configuration loaders, a layer that does not link messages/, keep their own.)

#include <cstddef>
#include <string_view>

namespace rmbus::messages {

// The length (1-4) of the valid UTF-8 sequence starting at s[at], or 0 when the bytes there are not one
// (a stray continuation byte, 0xF8..0xFF, a truncated or overlong sequence, a surrogate, past U+10FFFF).
// REQUIRES: at < s.size().
std::size_t utf8_sequence_length(std::string_view s, std::size_t at);

bool valid_utf8(std::string_view s);

}  // namespace rmbus::messages
