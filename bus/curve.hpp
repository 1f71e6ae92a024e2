#pragma once
// CURVE on the bus and the admin endpoint: key pairs and their files, the list of allowed public keys with
// the roles each may play, and what a role may publish. docs/bus.md ("Security") describes the files.
//
// The forwarder and rmbus hold server key pairs; agents, orchestrators, monitors, admins and the RM's own
// processes hold client key pairs. A ZAP handler (bus/zap_handler.hpp) admits a connection only when its
// public key is listed, and tells the server the key's roles and name as the connection's User-Id
// ("ROLES:NAME:PUBLIC_KEY"), which every message received on it carries: that is how the forwarder checks
// each message's topic against its sender's roles (bus/forwarder.hpp).
//
// Files (all text, one item a line, '#' starts a comment line):
//   key pair file (rmbus-keygen NAME.key, mode 0600):  public = <Z85>   secret = <Z85>
//   public key file (NAME.pub):                         public = <Z85>
//   keys file (the allowed keys):                       ROLE[,ROLE...]  NAME  <Z85 public key>
// A Z85 key is 40 characters; names are 1..64 characters of [A-Za-z0-9._-] and unique in a keys file.
//
// Only the standard library here: the ZeroMQ calls are in curve.cpp.

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace zmq {
class socket_t;
}

namespace rmbus::bus {

// A bad key file, keys file, role list or key: the message names the file, the line and what is wrong.
class curve_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Z85 text, 40 characters each. `secret_key` is empty for a public key file.
struct curve_keypair {
  std::string public_key;
  std::string secret_key;
};

// A fresh key pair from libsodium (zmq_curve_keypair).
curve_keypair make_curve_keypair();
// The public key of a secret key (zmq_curve_public); throws curve_error on a malformed key.
std::string curve_public_of(const std::string& secret_key);
// True when `key` is 40 characters of Z85 that decode to 32 bytes.
bool is_z85_key(std::string_view key);

// Key files. parse_key_file checks each key, and that the public key belongs to the secret one.
std::string key_file_text(const curve_keypair& keys, bool with_secret);
curve_keypair parse_key_file(std::string_view text, const std::string& file_name);
// need_secret: a file without `secret` is an error naming the file.
curve_keypair read_key_file(const std::filesystem::path& file, bool need_secret);
// Writes NAME with mode 0600 when it holds the secret (0644 otherwise); refuses to replace an existing file.
void write_key_file(const std::filesystem::path& file, const curve_keypair& keys, bool with_secret);

// Roles, as a bit set: a key may play several (rmbus-sim plays agents and the orchestrator with one key).
using role_set = unsigned;
namespace roles {
inline constexpr role_set agent = 1;         // may publish agent.heartbeat
inline constexpr role_set orchestrator = 2;  // may publish orchestrator.workmap
inline constexpr role_set monitor = 4;       // may only subscribe
inline constexpr role_set admin = 8;         // may send admin requests (and subscribe)
inline constexpr role_set rm = 16;           // the RM's own processes: may publish rm.*
}  // namespace roles
inline constexpr std::string_view role_list_names = "agent, orchestrator, monitor, admin, rm";

// "agent,orchestrator" -> bits; throws curve_error naming an unknown role or an empty list.
role_set parse_role_list(std::string_view list);
std::string role_list_text(role_set set);  // "agent,orchestrator"
// Whether a sender holding `set` may publish on `topic` (exact topics; rm.* by prefix).
bool may_publish(role_set set, std::string_view topic);

struct allowed_key {
  std::string public_key;
  std::string name;
  role_set roles = 0;
};

std::vector<allowed_key> parse_keys_file(std::string_view text, const std::string& file_name);
std::vector<allowed_key> read_keys_file(const std::filesystem::path& file);
// One keys-file line for `key` (rmbus-keygen --keys appends it).
std::string keys_file_line(const allowed_key& key);

// What a connecting socket needs: the server's public key and its own pair.
struct curve_client {
  std::string server_public_key;
  curve_keypair own;
};

// The tools' `--key FILE --server-key FILE`: nothing when both are empty (CURVE off), both files read
// otherwise; throws curve_error when only one is given or a file is bad.
std::optional<curve_client> load_curve_client(const std::string& key_file,
                                              const std::string& server_key_file);

// ZAP domains: the forwarder's sockets admit any listed key; the admin endpoint only admin keys.
inline constexpr std::string_view bus_zap_domain = "rmbus.bus";
inline constexpr std::string_view admin_zap_domain = "rmbus.admin";

// Socket options, set before connect / bind.
void apply_curve_client(zmq::socket_t& socket, const curve_client& curve);
void apply_curve_server(zmq::socket_t& socket, const curve_keypair& own, std::string_view zap_domain);

// Who a CURVE peer is, as the ZAP handler wrote it into the connection's User-Id ("ROLES:NAME:PUBLIC_KEY").
struct peer_identity {
  role_set roles = 0;
  std::string name;
  std::string public_key;
};
std::string user_id_of(const allowed_key& key);
std::optional<peer_identity> parse_user_id(std::string_view user_id);
// Only the roles, from the text before the first ':' (the forwarder's per-message check). 0 when malformed.
role_set roles_of_user_id(std::string_view user_id);

}  // namespace rmbus::bus
