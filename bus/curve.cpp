#include "bus/curve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <zmq.hpp>

namespace rmbus::bus {

namespace {

constexpr std::size_t z85_key_chars = 40;
constexpr std::size_t max_key_file_bytes = 64 * 1024;
constexpr std::size_t max_keys_file_bytes = 16 * 1024 * 1024;
constexpr std::size_t max_name_chars = 64;

struct role_name {
  std::string_view name;
  role_set bit;
};
constexpr std::array<role_name, 5> role_names{{{"agent", roles::agent},
                                               {"orchestrator", roles::orchestrator},
                                               {"monitor", roles::monitor},
                                               {"admin", roles::admin},
                                               {"rm", roles::rm}}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string where(const std::string& file, int line) { return file + ":" + std::to_string(line) + ": "; }

// Calls f(line_number, line) for every line that is neither empty nor a comment.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  int number = 0;
  while (!text.empty()) {
    ++number;
    auto end = text.find('\n');
    auto line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    f(number, line);
  }
}

std::string read_bounded(const std::filesystem::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw curve_error(file.string() + ": cannot read (" + std::strerror(errno) + ")");
  std::string text;
  text.resize(max_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_bytes)
    throw curve_error(file.string() + ": larger than " + std::to_string(max_bytes) + " bytes");
  return text;
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > max_name_chars) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

curve_keypair make_curve_keypair() {
  std::array<char, z85_key_chars + 1> pub{};
  std::array<char, z85_key_chars + 1> sec{};
  if (zmq_curve_keypair(pub.data(), sec.data()) != 0)
    throw curve_error(std::string{"cannot make a CURVE key pair: "} + zmq_strerror(zmq_errno()));
  return {std::string(pub.data()), std::string(sec.data())};
}

bool is_z85_key(std::string_view key) {
  if (key.size() != z85_key_chars) return false;
  // ZeroMQ reads a key up to its first NUL: "ABCDE\0..." would decode 4 bytes and pass, and zmq_curve_public
  // would then derive a public key from the rest of an uninitialised buffer (fuzz_curve_files).
  if (key.find('\0') != std::string_view::npos) return false;
  const std::string text{key};
  std::array<std::uint8_t, 32> raw{};
  return zmq_z85_decode(raw.data(), text.c_str()) != nullptr;
}

std::string curve_public_of(const std::string& secret_key) {
  if (!is_z85_key(secret_key)) throw curve_error("not a CURVE key (40 characters of Z85)");
  std::array<char, z85_key_chars + 1> pub{};
  if (zmq_curve_public(pub.data(), secret_key.c_str()) != 0)
    throw curve_error(std::string{"cannot derive the public key: "} + zmq_strerror(zmq_errno()));
  return std::string(pub.data());
}

std::string key_file_text(const curve_keypair& keys, bool with_secret) {
  std::string out = with_secret ? "# rmbus CURVE key pair: keep this file secret (mode 0600)\n"
                                : "# rmbus CURVE public key\n";
  out += "public = " + keys.public_key + "\n";
  if (with_secret) out += "secret = " + keys.secret_key + "\n";
  return out;
}

curve_keypair parse_key_file(std::string_view text, const std::string& file_name) {
  curve_keypair keys;
  for_each_line(text, [&](int line, std::string_view l) {
    // The entry's name is the leading word; Z85 itself contains '=', so the first '=' after the word is the
    // separator. Nothing of the value is ever echoed: it may be a secret key.
    std::size_t word = 0;
    while (word < l.size() && l[word] >= 'a' && l[word] <= 'z') ++word;
    const auto name = l.substr(0, word);
    auto rest = trim(l.substr(word));
    if (name.empty() || rest.empty() || rest.front() != '=')
      throw curve_error(where(file_name, line) + "expected 'public = KEY' or 'secret = KEY'");
    auto value = trim(rest.substr(1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    std::string* target = name == "public" ? &keys.public_key : name == "secret" ? &keys.secret_key : nullptr;
    if (target == nullptr)
      throw curve_error(where(file_name, line) + "unknown entry '" + std::string{name} +
                        "' (known: public, secret)");
    if (!target->empty())
      throw curve_error(where(file_name, line) + "'" + std::string{name} + "' given twice");
    if (!is_z85_key(value))
      throw curve_error(where(file_name, line) + std::string{name} +
                        ": not a CURVE key (40 characters of Z85)");
    *target = std::string{value};
  });
  if (keys.public_key.empty() && keys.secret_key.empty())
    throw curve_error(file_name + ": no key in the file");
  if (!keys.secret_key.empty()) {
    const auto derived = curve_public_of(keys.secret_key);
    if (keys.public_key.empty())
      keys.public_key = derived;
    else if (keys.public_key != derived)
      throw curve_error(file_name + ": the public key does not belong to the secret key");
  }
  return keys;
}

curve_keypair read_key_file(const std::filesystem::path& file, bool need_secret) {
  auto keys = parse_key_file(read_bounded(file, max_key_file_bytes), file.string());
  if (need_secret && keys.secret_key.empty())
    throw curve_error(file.string() + ": holds no secret key (a key pair file from rmbus-keygen is needed)");
  return keys;
}

void write_key_file(const std::filesystem::path& file, const curve_keypair& keys, bool with_secret) {
  const auto text = key_file_text(keys, with_secret);
  // O_EXCL: never replace a key someone relies on; the mode is set at creation, so the secret is never
  // readable.
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL, with_secret ? 0600 : 0644);
  if (fd < 0) throw curve_error(file.string() + ": cannot create (" + std::strerror(errno) + ")");
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw curve_error(file.string() + ": cannot write (" + std::strerror(err) + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw curve_error(file.string() + ": cannot write (" + std::strerror(errno) + ")");
}

role_set parse_role_list(std::string_view list) {
  role_set set = 0;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    const auto item = trim(list.substr(start, end - start));
    bool known = false;
    for (const auto& r : role_names) {
      if (r.name == item) {
        set |= r.bit;
        known = true;
      }
    }
    if (!known)
      throw curve_error("unknown role '" + std::string{item} + "' (known: " + std::string{role_list_names} +
                        ")");
    start = end + 1;
  }
  return set;
}

std::string role_list_text(role_set set) {
  std::string out;
  for (const auto& r : role_names) {
    if ((set & r.bit) == 0) continue;
    if (!out.empty()) out += ',';
    out += r.name;
  }
  return out;
}

bool may_publish(role_set set, std::string_view topic) {
  if ((set & roles::agent) != 0 && topic == "agent.heartbeat") return true;
  if ((set & roles::orchestrator) != 0 && topic == "orchestrator.workmap") return true;
  return (set & roles::rm) != 0 && topic.substr(0, 3) == "rm.";
}

std::vector<allowed_key> parse_keys_file(std::string_view text, const std::string& file_name) {
  std::vector<allowed_key> keys;
  std::set<std::string, std::less<>> names;
  std::set<std::string, std::less<>> publics;
  for_each_line(text, [&](int line, std::string_view l) {
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < l.size()) {
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
      const auto begin = i;
      while (i < l.size() && l[i] != ' ' && l[i] != '\t') ++i;
      if (i > begin) fields.push_back(l.substr(begin, i - begin));
    }
    if (fields.size() != 3)
      throw curve_error(where(file_name, line) + "expected 'ROLE[,ROLE...] NAME PUBLIC_KEY', got " +
                        std::to_string(fields.size()) + " fields");
    allowed_key k;
    try {
      k.roles = parse_role_list(fields[0]);
    } catch (const curve_error& e) {
      throw curve_error(where(file_name, line) + e.what());
    }
    if (!valid_name(fields[1]))
      throw curve_error(where(file_name, line) + "name '" + std::string{fields[1]} +
                        "': 1..64 characters of letters, digits, '.', '_' or '-'");
    if (!is_z85_key(fields[2]))
      throw curve_error(where(file_name, line) + "not a CURVE public key (40 characters of Z85)");
    k.name = std::string{fields[1]};
    k.public_key = std::string{fields[2]};
    if (!names.insert(k.name).second)
      throw curve_error(where(file_name, line) + "name '" + k.name + "' listed twice");
    if (!publics.insert(k.public_key).second)
      throw curve_error(where(file_name, line) +
                        "public key listed twice (give one line several roles instead)");
    keys.push_back(std::move(k));
  });
  return keys;
}

std::vector<allowed_key> read_keys_file(const std::filesystem::path& file) {
  return parse_keys_file(read_bounded(file, max_keys_file_bytes), file.string());
}

std::string keys_file_line(const allowed_key& key) {
  return role_list_text(key.roles) + " " + key.name + " " + key.public_key + "\n";
}

std::optional<curve_client> load_curve_client(const std::string& key_file,
                                              const std::string& server_key_file) {
  if (key_file.empty() && server_key_file.empty()) return std::nullopt;
  if (key_file.empty() || server_key_file.empty())
    throw curve_error(
        "CURVE needs both --key (this client's key pair) and --server-key (the server's public key)");
  return curve_client{read_key_file(server_key_file, false).public_key, read_key_file(key_file, true)};
}

void apply_curve_client(zmq::socket_t& socket, const curve_client& curve) {
  socket.set(zmq::sockopt::curve_serverkey, curve.server_public_key);
  socket.set(zmq::sockopt::curve_publickey, curve.own.public_key);
  socket.set(zmq::sockopt::curve_secretkey, curve.own.secret_key);
}

void apply_curve_server(zmq::socket_t& socket, const curve_keypair& own, std::string_view zap_domain) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
  socket.set(zmq::sockopt::zap_domain, std::string{zap_domain});
}

std::string user_id_of(const allowed_key& key) {
  return role_list_text(key.roles) + ":" + key.name + ":" + key.public_key;
}

std::optional<peer_identity> parse_user_id(std::string_view user_id) {
  const auto first = user_id.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const auto second = user_id.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  peer_identity p;
  try {
    p.roles = parse_role_list(user_id.substr(0, first));
  } catch (const curve_error&) {
    return std::nullopt;
  }
  p.name = std::string{user_id.substr(first + 1, second - first - 1)};
  p.public_key = std::string{user_id.substr(second + 1)};
  return p;
}

role_set roles_of_user_id(std::string_view user_id) {
  const auto colon = user_id.find(':');
  if (colon == std::string_view::npos) return 0;
  try {
    return parse_role_list(user_id.substr(0, colon));
  } catch (const curve_error&) {
    return 0;
  }
}

}  // namespace rmbus::bus
