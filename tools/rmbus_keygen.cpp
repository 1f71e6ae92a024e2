// rmbus-keygen: makes a CURVE key pair for the bus and the admin endpoint (docs/bus.md, "Security").
//
//   rmbus-keygen --out DIR/NAME [--roles ROLE[,ROLE...] --keys FILE]
//
// Writes DIR/NAME.key (public and secret key, mode 0600: give it to the one process that uses it) and
// DIR/NAME.pub (the public key alone: hand it to whoever connects, for a server's key, as --server-key).
// With --roles and --keys it also appends "ROLES NAME PUBLIC_KEY" to the keys file the forwarder and rmbus
// admit from (created when missing). Existing files are never replaced. Exit status: 0 done, 2 usage error,
// 1 a file could not be written.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "bus/curve.hpp"
#include "tools/common/version_flag.hpp"

namespace fs = std::filesystem;
using namespace rmbus::bus;

int main(int argc, char** argv) {
  std::string out;
  std::string role_list;
  std::string keys_file;
  CLI::App app{"rmbus-keygen: makes a CURVE key pair (NAME.key, mode 0600, and NAME.pub)"};
  rmbus::tools::add_version_flag(app, "rmbus-keygen");
  app.add_option("--out", out, "DIR/NAME: writes DIR/NAME.key and DIR/NAME.pub; NAME names the key")
      ->required();
  auto* roles_opt = app.add_option(
      "--roles", role_list, "with --keys: the roles of the key (" + std::string{role_list_names} + ")");
  auto* keys_opt =
      app.add_option("--keys", keys_file, "append the public key with its roles to this keys file");
  roles_opt->needs(keys_opt);
  keys_opt->needs(roles_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  const fs::path base = out;
  allowed_key entry;
  entry.name = base.filename().string();
  try {
    if (!keys_file.empty()) {
      entry.roles = parse_role_list(role_list);
      // The line must read back, and neither its name nor (later) its key may clash with the file's.
      if (fs::exists(keys_file)) {
        for (const auto& k : read_keys_file(keys_file))
          if (k.name == entry.name)
            throw curve_error(keys_file + ": the name '" + entry.name + "' is listed already");
      }
      entry.public_key = make_curve_keypair().public_key;  // placeholder, only to check the line's form
      (void)parse_keys_file(keys_file_line(entry), "the new line");
    }
  } catch (const curve_error& e) {
    std::cerr << "rmbus-keygen: " << e.what() << "\n";
    return 2;
  }

  const auto keys = make_curve_keypair();
  const fs::path key_path = base.string() + ".key";
  const fs::path pub_path = base.string() + ".pub";
  try {
    if (fs::exists(pub_path)) throw curve_error(pub_path.string() + ": exists already (never replaced)");
    write_key_file(key_path, keys, true);
    write_key_file(pub_path, keys, false);
    std::cout << "wrote " << key_path.string() << " (secret, mode 0600) and " << pub_path.string() << "\n";
    if (!keys_file.empty()) {
      entry.public_key = keys.public_key;
      std::ofstream f(keys_file, std::ios::app);
      f << keys_file_line(entry);
      f.close();
      if (!f) throw curve_error(keys_file + ": cannot append");
      std::cout << "listed " << entry.name << " (" << role_list_text(entry.roles) << ") in " << keys_file
                << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "rmbus-keygen: " << e.what() << "\n";
    return 1;
  }
  std::cout << keys.public_key << "\n";
  return 0;
}
