// The Debian package end to end: cpack builds it from this build tree, dpkg-deb reads its control data and
// unpacks it into a scratch root, the installed rmbus validates the installed example configuration and runs
// with it (answering the installed rmbus-admin), and systemd-analyze verifies the installed units and rates
// their sandboxing (skipped, saying so, where systemd-analyze is absent).
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"

namespace fs = std::filesystem;
using rmbus::test_support::child_process;
using rmbus::test_support::run_to_end;
using namespace std::chrono_literals;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in{p};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

struct scratch_dir {
  fs::path path;
  explicit scratch_dir(const std::string& name)
      : path{fs::temp_directory_path() / ("rmbus-" + name + "-" + std::to_string(::getpid()))} {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~scratch_dir() { fs::remove_all(path); }
};

std::string need(const std::string& path, const char* program, const char* package) {
  if (path.empty())
    FAIL(program << " not found: install Debian's " << package << " (tools/install-deps.sh does)");
  return path;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The Depends field of a package's control data, as package names.
std::set<std::string> depends_of(const std::string& control) {
  std::smatch m;
  std::set<std::string> names;
  if (!std::regex_search(control, m, std::regex{R"(\n Depends: ([^\n]*))"})) return names;
  const std::string list = m[1];
  const std::regex name{R"((?:^|[,|]) *([a-z0-9][a-z0-9.+-]+))"};
  for (auto it = std::sregex_iterator(list.begin(), list.end(), name); it != std::sregex_iterator{}; ++it)
    names.insert((*it)[1]);
  return names;
}

// The names a library's package answers to in a Depends field: the package owning the file (dpkg knows each
// file of bookworm's merged /usr under one of its two names) and the virtual packages it provides
// (libspdlog1.10 provides libspdlog1.10-fmt9, the name its shlibs file gives).
std::set<std::string> package_names_of(const std::string& library) {
  std::vector<std::string> candidates{library};
  candidates.push_back(library.rfind("/usr/", 0) == 0 ? library.substr(4) : "/usr" + library);
  candidates.push_back(fs::canonical(library).string());
  for (const auto& path : candidates) {
    const auto r = run_to_end("/usr/bin/dpkg-query", {"-S", path}, 30s);
    if (r.status != 0) continue;
    const auto package = r.output.substr(0, r.output.find(':'));
    std::set<std::string> names{package};
    const auto provides = run_to_end("/usr/bin/dpkg-query", {"-W", "-f=${Provides}", package}, 30s);
    const std::regex name{R"((?:^|,) *([a-z0-9][a-z0-9.+-]+))"};
    for (auto it = std::sregex_iterator(provides.output.begin(), provides.output.end(), name);
         it != std::sregex_iterator{}; ++it)
      names.insert((*it)[1]);
    return names;
  }
  return {};
}

// The libraries a program names itself (its NEEDED entries), with the paths ldd resolves them to. Their own
// dependencies are their packages' business, as dpkg-shlibdeps sees it.
std::map<std::string, std::string> needed_libraries(const fs::path& program) {
  const auto ldd = run_to_end("/usr/bin/ldd", {program.string()}, 30s);
  std::map<std::string, std::string> resolved;
  const std::regex resolved_line{R"(^\s*(\S+) => (/\S+))", std::regex::multiline};
  for (auto it = std::sregex_iterator(ldd.output.begin(), ldd.output.end(), resolved_line);
       it != std::sregex_iterator{}; ++it)
    resolved[(*it)[1]] = (*it)[2];
  const auto dynamic = run_to_end("/usr/bin/objdump", {"-p", program.string()}, 30s);
  std::map<std::string, std::string> out;
  const std::regex needed{R"(NEEDED\s+(\S+))"};
  for (auto it = std::sregex_iterator(dynamic.output.begin(), dynamic.output.end(), needed);
       it != std::sregex_iterator{}; ++it)
    out[(*it)[1]] = resolved[(*it)[1]];  // empty: ldd did not resolve it
  return out;
}

// A copy of a unit file in `into` whose ExecStart runs `program` (the unit's /usr/bin/<name>) from
// `program_path` instead, so that systemd-analyze, which checks that ExecStart names an executable, finds the
// unpacked or built one.
std::string unit_for_verify(const fs::path& unit, const std::string& program, const std::string& program_path,
                            const fs::path& into) {
  fs::create_directories(into);
  const auto text = slurp(unit);
  const std::string from = "ExecStart=/usr/bin/" + program + " ";
  REQUIRE(text.find(from) != std::string::npos);
  std::ofstream{into / unit.filename()} << replace_all(text, from, "ExecStart=" + program_path + " ");
  return (into / unit.filename()).string();
}

// systemd-analyze verify: a unit passes only with exit 0 and nothing printed (an unknown key or a bad value
// is only a warning, with exit 0).
rmbus::test_support::run_result verify_units(const std::vector<std::string>& unit_files) {
  std::vector<std::string> args{"verify", "--man=no"};
  args.insert(args.end(), unit_files.begin(), unit_files.end());
  return run_to_end(RMBUS_SYSTEMD_ANALYZE, args, 60s);
}

const std::vector<std::string> installed_programs{"rmbus",     "rmbus-proxy", "rmbus-admin", "rmbus-keygen",
                                                  "rmbus-top", "rmbus-sim",   "rmbus-load"};

}  // namespace

TEST_CASE(
    "the Debian package builds, depends on Debian's runtime packages, and its rmbus runs from a scratch "
    "root") {
  const auto dpkg_deb = need(RMBUS_DPKG_DEB, "dpkg-deb", "dpkg");
  INFO("the build's CMAKE_INSTALL_PREFIX: " << RMBUS_INSTALL_PREFIX);
  REQUIRE(std::string{RMBUS_INSTALL_PREFIX} == "/usr");  // the Debian package's prefix
  scratch_dir scratch{"deploy-package"};
  const auto out = scratch.path / "package";

  // Build the package from this build tree.
  const auto built = run_to_end(
      RMBUS_CPACK,
      {"-G", "DEB", "--config", std::string{RMBUS_BINARY_DIR} + "/CPackConfig.cmake", "-B", out.string()},
      400s);
  INFO(built.output);
  REQUIRE(built.status == 0);
  fs::path deb;
  for (const auto& e : fs::directory_iterator{out})
    if (e.path().extension() == ".deb") deb = e.path();
  REQUIRE(!deb.empty());
  CHECK(deb.filename().string().rfind("rmbus_", 0) == 0);

  // Its control data: name, maintainer scripts, and dependencies that are Debian's runtime packages.
  const auto info = run_to_end(dpkg_deb, {"-I", deb.string()}, 60s);
  INFO(info.output);
  REQUIRE(info.status == 0);
  CHECK(info.output.find(" Package: rmbus\n") != std::string::npos);
  for (const char* script : {"postinst", "prerm", "postrm", "conffiles"}) {
    INFO(script);
    CHECK(std::regex_search(info.output, std::regex{std::string{" "} + script + "\\b"}));
  }
  const auto depends = depends_of(info.output);
  INFO("Depends: " << ::Catch::Detail::stringify(depends));
  REQUIRE(!depends.empty());
  for (const auto& d : depends) {
    INFO(d);
    CHECK(d.find("-dev") == std::string::npos);
  }

  // Unpack into the scratch root: every program, the configuration, the units, the documents.
  const auto root = scratch.path / "root";
  const auto unpacked = run_to_end(dpkg_deb, {"-x", deb.string(), root.string()}, 120s);
  INFO(unpacked.output);
  REQUIRE(unpacked.status == 0);
  for (const auto& program : installed_programs) {
    INFO(program);
    CHECK(fs::is_regular_file(root / "usr/bin" / program));
  }
  const auto config = root / "etc/rmbus/rmbus.toml";
  const auto unit_dir = root / "usr/lib/systemd/system";
  for (const fs::path& file :
       {config, unit_dir / "rmbus.service", unit_dir / "rmbus-proxy.service",
        root / "usr/lib/sysusers.d/rmbus.conf", root / "usr/share/doc/rmbus/README.md",
        root / "usr/share/doc/rmbus/deploy.md", root / "usr/share/doc/rmbus/metrics.md",
        root / "usr/share/rmbus/grafana/rmbus-dashboard.json",
        root / "usr/share/rmbus/prometheus/rmbus-alerts.yml",
        root / "usr/share/rmbus/sim/scenarios/mixed.toml"}) {
    INFO(file);
    CHECK(fs::is_regular_file(file));
  }
#ifdef RMBUS_WEB_INSTALLED
  CHECK(fs::is_regular_file(root / "usr/bin/rmbus-web"));
  CHECK(fs::is_regular_file(unit_dir / "rmbus-web.service"));
#else
  CHECK(!fs::exists(unit_dir / "rmbus-web.service"));  // no unit for a program the package does not hold
#endif
  CHECK(slurp(root / "usr/lib/sysusers.d/rmbus.conf").find("\nu rmbus ") != std::string::npos);

  // The maintainer scripts are valid shell.
  const auto control = scratch.path / "control";
  const auto extracted = run_to_end(dpkg_deb, {"-e", deb.string(), control.string()}, 60s);
  REQUIRE(extracted.status == 0);
  for (const char* script : {"postinst", "prerm", "postrm"}) {
    const auto syntax = run_to_end("/bin/sh", {"-n", (control / script).string()}, 30s);
    INFO(script << ": " << syntax.output);
    CHECK(syntax.status == 0);
  }
  CHECK(slurp(control / "conffiles") == "/etc/rmbus/rmbus.toml\n");

  // Every shared library an installed program names comes from a package the Depends field names.
  for (const auto& program : installed_programs) {
    const auto libraries = needed_libraries(root / "usr/bin" / program);
    INFO(program);
    CHECK(libraries.count("libc.so.6") == 1);
    for (const auto& [soname, path] : libraries) {
      INFO(soname << " => " << path);
      REQUIRE(!path.empty());
      const auto names = package_names_of(path);
      INFO("its package answers to " << ::Catch::Detail::stringify(names));
      CHECK(std::any_of(names.begin(), names.end(),
                        [&](const std::string& n) { return depends.count(n) == 1; }));
    }
  }

  // The installed rmbus validates the installed configuration and prints it resolved.
  const auto installed_rmbus = (root / "usr/bin/rmbus").string();
  const auto check = run_to_end(installed_rmbus, {"--check-config", "--config", config.string()}, 60s);
  INFO(check.output);
  CHECK(check.status == 0);
  CHECK(check.output.find("name = \"batch\"") != std::string::npos);
  CHECK(check.output.find("name = \"drivers\"") != std::string::npos);
  CHECK(check.output.find("/var/log/rmbus/rmbus.log") != std::string::npos);

  // An operator's mistake in it: a clear error naming the file and line, exit 2.
  const auto edited = scratch.path / "edited.toml";
  std::ofstream{edited} << replace_all(slurp(config), "weight = 200", "weight = -200");
  const auto bad = run_to_end(installed_rmbus, {"--check-config", "--config", edited.string()}, 60s);
  INFO(bad.output);
  CHECK(bad.status == 2);
  CHECK(bad.output.find("edited.toml") != std::string::npos);
  CHECK(bad.output.find("weight") != std::string::npos);

  // The installed rmbus runs on that configuration (log and accounting files moved into the scratch folder,
  // endpoints on free loopback ports) and the installed rmbus-admin gets its status; SIGTERM stops it, exit
  // 0.
  const auto run_config = scratch.path / "run.toml";
  const auto log_file = scratch.path / "log" / "rmbus.log";
  std::ofstream{run_config} << replace_all(
      replace_all(slurp(config), "/var/log/rmbus/rmbus.log", log_file.string()),
      "/var/lib/rmbus/accounting.jsonl", (scratch.path / "accounting.jsonl").string());
  const auto admin = rmbus::test_support::loopback(rmbus::test_support::free_port());
  child_process rm{installed_rmbus,
                   {"--config", run_config.string(), "--bus-pub",
                    rmbus::test_support::loopback(rmbus::test_support::free_port()), "--bus-sub",
                    rmbus::test_support::loopback(rmbus::test_support::free_port()), "--admin", admin,
                    "--metrics", "127.0.0.1:0"},
                   (scratch.path / "rmbus.out").string()};
  rmbus::test_support::run_result status;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  do {  // each attempt waits up to 1 s for the answer: the admin endpoint is bound moments after start
    status = run_to_end((root / "usr/bin/rmbus-admin").string(),
                        {"--admin", admin, "--timeout-ms", "1000", "status"}, 10s);
  } while (status.status != 0 && rm.running() && std::chrono::steady_clock::now() < deadline);
  INFO("rmbus-admin status:\n" << status.output << "\nrmbus:\n" << slurp(scratch.path / "rmbus.out"));
  CHECK(status.status == 0);
  rm.signal(SIGTERM);
  CHECK(rm.wait(30s) == 0);
  CHECK(fs::is_regular_file(log_file));

  // The installed rmbus-load finds the installed rmbus beside it, and one short start-up run passes.
  const auto load = run_to_end((root / "usr/bin/rmbus-load").string(),
                               {"--nodes", "4", "--jobs", "4", "--users", "1", "--phases", "startup",
                                "--runs", "1", "--work-dir", (scratch.path / "load").string()},
                               120s);
  INFO(load.output);
  CHECK(load.status == 0);
  CHECK(load.output.find("rmbus " + (root / "usr/bin/rmbus").string()) != std::string::npos);
  CHECK(load.output.find("startup: 4 nodes") != std::string::npos);

  // The postinst, run as dpkg runs it (configure; then again, as an upgrade from 0.0.1), with its
  // systemd-sysusers call applied to the scratch root instead of the system: the rmbus user and group appear
  // once, with the home where the units' StateDirectory is and no login shell. (No systemd runs here, so its
  // systemctl calls are not reached.)
  if (std::string{RMBUS_SYSTEMD_SYSUSERS}.empty()) {
    WARN("SKIPPED: systemd-sysusers not found: the postinst was not run");
  } else {
    const auto shim_dir = scratch.path / "shim";
    fs::create_directories(shim_dir);
    std::ofstream{shim_dir / "systemd-sysusers"} << "#!/bin/sh\nexec " << RMBUS_SYSTEMD_SYSUSERS
                                                 << " --root=" << root.string() << " " << root.string()
                                                 << "\"$1\"\n";
    fs::permissions(shim_dir / "systemd-sysusers", fs::perms::owner_all);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"configure"}, {"configure", "0.0.1"}}) {
      std::vector<std::string> command{"PATH=" + shim_dir.string() + ":/usr/sbin:/usr/bin:/sbin:/bin",
                                       "/bin/sh", (control / "postinst").string()};
      command.insert(command.end(), args.begin(), args.end());
      const auto postinst = run_to_end("/usr/bin/env", command, 60s);
      INFO("postinst " << ::Catch::Detail::stringify(args) << ": " << postinst.output);
      CHECK(postinst.status == 0);
    }
    const auto passwd = slurp(root / "etc/passwd");
    INFO(passwd);
    const std::regex user{R"((^|\n)rmbus:x:\d+:\d+:[^:]*:/var/lib/rmbus:/usr/sbin/nologin\n)"};
    CHECK(std::distance(std::sregex_iterator(passwd.begin(), passwd.end(), user), std::sregex_iterator{}) ==
          1);
    CHECK(std::regex_search(slurp(root / "etc/group"), std::regex{R"((^|\n)rmbus:x:\d+:)"}));
  }

  // The units, as installed: systemd-analyze verify (nothing printed), and its sandboxing rating.
  if (std::string{RMBUS_SYSTEMD_ANALYZE}.empty()) {
    WARN("SKIPPED: systemd-analyze not found (no systemd here): the units were not verified");
    return;
  }
  std::vector<fs::path> units;
  for (const auto& e : fs::directory_iterator{unit_dir})
    if (e.path().extension() == ".service") units.push_back(e.path());
  REQUIRE(units.size() >= 2);
  std::vector<std::string> copies;
  for (const auto& unit : units) {
    const auto program = unit.stem().string();  // rmbus.service runs rmbus, and so on
    copies.push_back(
        unit_for_verify(unit, program, (root / "usr/bin" / program).string(), scratch.path / "verify"));
  }
  const auto verified = verify_units(copies);
  INFO(verified.output);
  CHECK(verified.status == 0);
  CHECK(verified.output.empty());
  for (const auto& copy : copies) {
    // Exposure 0 (locked down) .. 10 (none); the threshold is in tenths: above 2.0 fails.
    const auto rated =
        run_to_end(RMBUS_SYSTEMD_ANALYZE, {"security", "--offline=yes", "--threshold=20", copy}, 60s);
    std::smatch m;
    const bool found =
        std::regex_search(rated.output, m, std::regex{R"(Overall exposure level for \S+: [^\n]*)"});
    INFO(rated.output);
    CHECK(found);
    if (found) WARN(m.str());
    CHECK(rated.status == 0);
  }
}

TEST_CASE(
    "every unit as configured in this build passes systemd-analyze verify, and a misspelt key fails it") {
  if (std::string{RMBUS_SYSTEMD_ANALYZE}.empty()) {
    WARN("SKIPPED: systemd-analyze not found (no systemd here)");
    return;
  }
  scratch_dir scratch{"deploy-verify"};
  // Every unit, also rmbus-web's before its program is part of the build (then /usr/bin/true stands in for
  // it, so verify still checks every line), each running the program the build made.
  const std::string built_web = RMBUS_BUILT_WEB;
  if (built_web.empty())
    WARN("rmbus-web is not built yet: its unit is verified with /usr/bin/true as ExecStart");
  const std::vector<std::pair<std::string, std::string>> programs{
      {"rmbus", RMBUS_BUILT_RMBUS},
      {"rmbus-proxy", RMBUS_BUILT_PROXY},
      {"rmbus-web", built_web.empty() ? std::string{"/usr/bin/true"} : built_web}};
  std::vector<std::string> good;
  for (const auto& [program, path] : programs)
    good.push_back(unit_for_verify(fs::path{RMBUS_BINARY_DIR} / "deploy/systemd" / (program + ".service"),
                                   program, path, scratch.path / "good"));
  const auto as_built = verify_units(good);
  INFO(as_built.output);
  REQUIRE(as_built.status == 0);
  REQUIRE(as_built.output.empty());

  // The same rmbus unit with a misspelt key and a bad value: verify exits 0 but prints both.
  const auto bad_dir = scratch.path / "bad";
  fs::create_directories(bad_dir);
  const auto bad = (bad_dir / "rmbus.service").string();
  std::ofstream{bad} << replace_all(replace_all(slurp(good[0]), "ProtectHome=yes", "ProtectHomes=yes"),
                                    "RestartSec=5", "RestartSec=five");
  const auto r = verify_units({bad});
  INFO(r.output);
  CHECK(r.output.find("Unknown key 'ProtectHomes'") != std::string::npos);
  CHECK(r.output.find("five") != std::string::npos);
}
