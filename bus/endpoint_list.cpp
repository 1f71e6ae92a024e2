#include "bus/endpoint_list.hpp"

#include <algorithm>
#include <stdexcept>
#include <zmq.hpp>

namespace rmbus::bus {

namespace {
std::string_view trimmed(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}
}  // namespace

std::vector<std::string> split_endpoints(std::string_view list) {
  std::vector<std::string> out;
  if (trimmed(list).empty()) throw std::invalid_argument("no endpoint given");
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    const auto one = trimmed(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (one.empty()) throw std::invalid_argument("empty endpoint in the list '" + std::string{list} + "'");
    if (std::find(out.begin(), out.end(), one) != out.end())
      throw std::invalid_argument("endpoint '" + std::string{one} + "' is listed twice");
    if (out.size() == max_endpoints)
      throw std::invalid_argument("more than " + std::to_string(max_endpoints) + " endpoints in one list");
    out.emplace_back(one);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<std::string> endpoint_list_error(std::string_view list) {
  try {
    split_endpoints(list);
  } catch (const std::invalid_argument& e) {
    return std::string{e.what()};
  }
  return std::nullopt;
}

std::string join_endpoints(const std::vector<std::string>& endpoints) {
  std::string out;
  for (const auto& e : endpoints) {
    if (!out.empty()) out += ',';
    out += e;
  }
  return out;
}

std::vector<std::string> connect_all(zmq::socket_t& socket, std::string_view list) {
  auto endpoints = split_endpoints(list);
  for (auto& e : endpoints) {
    socket.connect(e);
    e = socket.get(zmq::sockopt::last_endpoint);
  }
  return endpoints;
}

std::vector<std::string> bind_all(zmq::socket_t& socket, std::string_view list) {
  auto endpoints = split_endpoints(list);
  for (auto& e : endpoints) {
    socket.bind(e);
    e = socket.get(zmq::sockopt::last_endpoint);
  }
  return endpoints;
}

}  // namespace rmbus::bus
