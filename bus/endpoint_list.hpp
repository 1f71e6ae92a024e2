#pragma once
// A list of bus endpoints: one endpoint, or several separated by commas ("tcp://h1:5560,tcp://h2:5560"),
// as --bus-pub / --bus-sub and [bus] pub / sub take them (docs/bus.md, "Several forwarders"). A client
// connects its socket to every endpoint of the list: a PUB socket then sends each message through every
// forwarder, a SUB socket receives a copy from each (the subscriber drops the copies: bus/sequence_tracker.hpp).
// A single endpoint is a list of one, so everything that took one endpoint still does, unchanged.
//
// A comma therefore never belongs to an endpoint (ZeroMQ's tcp, ipc and inproc addresses need none).
// Lists are untrusted input (command lines, configuration files): bounded, and every fault is named.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zmq {
class socket_t;
}

namespace rmbus::bus {

inline constexpr std::size_t max_endpoints = 16;

// The endpoints of `list`, in order; blanks around each are ignored. Throws std::invalid_argument naming
// the fault: an empty list or entry, an endpoint given twice, more than max_endpoints.
std::vector<std::string> split_endpoints(std::string_view list);
// The fault split_endpoints would throw for, or nullopt.
std::optional<std::string> endpoint_list_error(std::string_view list);
std::string join_endpoints(const std::vector<std::string>& endpoints);

// Connects `socket` to every endpoint of `list` and returns them as connected (throws zmq::error_t on an
// endpoint ZeroMQ refuses, std::invalid_argument on a malformed list).
std::vector<std::string> connect_all(zmq::socket_t& socket, std::string_view list);
// Binds `socket` to every endpoint of `list`; returns the endpoints actually bound (real ports for :0).
std::vector<std::string> bind_all(zmq::socket_t& socket, std::string_view list);

}  // namespace rmbus::bus
