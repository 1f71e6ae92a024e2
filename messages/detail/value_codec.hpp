#pragma once
// Internal: conversion between msgpack objects and messages::value, shared by value.cpp and admin.cpp.

#include "messages/detail/codec.hpp"
#include "messages/value.hpp"

namespace rmbus::messages::detail {

// Throws field_error naming the path for binary/extension values, non-string keys and duplicate keys.
// Recursion depth is bounded by the unpack depth limit the object was produced under.
value to_value(const msgpack::object& o, const path& at);
void pack_value(packer& pk, const value& v);

}  // namespace rmbus::messages::detail
