#include "config/detail/ducc_classes.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "config/detail/closest_name.hpp"
#include "config/detail/values.hpp"

namespace rmbus::config::detail {

namespace {

// ---- lexer -----------------------------------------------------------------------------------------------

enum class tok { word, open, close, equals, end };  // end = ';' or a line end

struct token {
  tok kind;
  std::string text;
  int line;
};

std::vector<token> tokenize(std::string_view text) {
  std::vector<token> tokens;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    ++line_no;
    auto stripped = trim(line);
    if (!stripped.empty() && stripped.front() != '#') {
      std::string word;
      auto flush = [&] {
        if (!word.empty()) tokens.push_back({tok::word, word, line_no});
        word.clear();
      };
      for (char c : line) {
        switch (c) {
          case '{': flush(); tokens.push_back({tok::open, "{", line_no}); break;
          case '}': flush(); tokens.push_back({tok::close, "}", line_no}); break;
          case '=': flush(); tokens.push_back({tok::equals, "=", line_no}); break;
          case ';': flush(); tokens.push_back({tok::end, ";", line_no}); break;
          case ',': case ' ': case '\t': case '\r': case '\f': case '\v': flush(); break;
          default: word += c;
        }
      }
      flush();
      tokens.push_back({tok::end, "", line_no});  // the line end acts as ';'
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  return tokens;
}

// ---- stanza parser ---------------------------------------------------------------------------------------

struct entry {
  std::string key;
  std::string value;  // tokens joined by single spaces
  source_loc loc;
};

struct stanza {
  std::string type;
  std::string name;
  std::optional<located<std::string>> parent;  // positional parent (Class only)
  source_loc loc;
  std::vector<entry> entries;
};

class stanza_reader {
 public:
  stanza_reader(std::vector<token> tokens, std::string file, error_list& errors)
      : tokens_(std::move(tokens)), file_(std::move(file)), errors_(errors) {}

  std::vector<stanza> read_all() {
    std::vector<stanza> out;
    while (skip_ends()) {
      auto s = read_stanza();
      if (s) out.push_back(std::move(*s));
    }
    return out;
  }

 private:
  source_loc loc(const token& t) const { return {file_, t.line}; }

  bool skip_ends() {
    while (pos_ < tokens_.size() && tokens_[pos_].kind == tok::end) ++pos_;
    return pos_ < tokens_.size();
  }

  // Skips to just after the next '}' (error recovery), so one bad stanza does not hide the others.
  void recover() {
    while (pos_ < tokens_.size() && tokens_[pos_].kind != tok::close) ++pos_;
    if (pos_ < tokens_.size()) ++pos_;
  }

  std::optional<stanza> read_stanza() {
    const token& head = tokens_[pos_];
    if (head.kind != tok::word) {
      errors_.add(loc(head), "expected 'Nodepool', 'Class' or 'User', found '" + head.text + "'");
      recover();
      return std::nullopt;
    }
    if (head.text != "Nodepool" && head.text != "Class" && head.text != "User") {
      std::string hint = head.text.starts_with("#")
                             ? " (ducc.classes has no trailing comments: put the comment on its own line)"
                             : "";
      errors_.add(loc(head), "expected 'Nodepool', 'Class' or 'User', found '" + head.text + "'" + hint);
      recover();
      return std::nullopt;
    }
    stanza s;
    s.type = head.text;
    s.loc = loc(head);
    ++pos_;
    std::vector<token> header;
    while (pos_ < tokens_.size() && tokens_[pos_].kind != tok::open && tokens_[pos_].kind != tok::close) {
      if (tokens_[pos_].kind == tok::word) header.push_back(tokens_[pos_]);
      if (tokens_[pos_].kind == tok::equals) {
        errors_.add(loc(tokens_[pos_]), "unexpected '=' in the " + s.type + " header");
      }
      ++pos_;
    }
    if (pos_ >= tokens_.size() || tokens_[pos_].kind != tok::open) {
      errors_.add(s.loc, s.type + " stanza has no '{'");
      recover();
      return std::nullopt;
    }
    ++pos_;  // '{'
    std::size_t max_header = s.type == "Class" ? 2 : 1;
    if (header.empty()) {
      errors_.add(s.loc, s.type + " stanza has no name");
    } else if (header.size() > max_header) {
      errors_.add(loc(header[max_header]), s.type == "Class"
                                               ? "expected 'Class <name> [<parent-class>] {'"
                                               : "expected '" + s.type + " <name> {'" +
                                                     (s.type == "Nodepool" ? " (a nodepool's parent is the key 'parent')" : ""));
    }
    if (!header.empty()) s.name = header[0].text;
    if (s.type == "Class" && header.size() >= 2) s.parent = located<std::string>{header[1].text, loc(header[1])};
    read_body(s);
    return s;
  }

  void read_body(stanza& s) {
    std::map<std::string, int> seen;
    while (true) {
      while (pos_ < tokens_.size() && tokens_[pos_].kind == tok::end) ++pos_;
      if (pos_ >= tokens_.size()) {
        errors_.add(s.loc, s.type + " '" + s.name + "' has no closing '}'");
        return;
      }
      const token& t = tokens_[pos_];
      if (t.kind == tok::close) {
        ++pos_;
        return;
      }
      if (t.kind != tok::word) {
        errors_.add(loc(t), "expected a key in " + s.type + " '" + s.name + "', found '" + t.text + "'");
        if (t.kind == tok::open) {
          recover();
          return;
        }
        ++pos_;
        continue;
      }
      entry e{t.text, {}, loc(t)};
      ++pos_;
      if (pos_ < tokens_.size() && tokens_[pos_].kind == tok::equals) ++pos_;
      bool bad = false;
      while (pos_ < tokens_.size() && tokens_[pos_].kind != tok::end && tokens_[pos_].kind != tok::close) {
        const token& v = tokens_[pos_];
        if (v.kind != tok::word) {
          errors_.add(loc(v), "unexpected '" + v.text + "' in the value of '" + e.key + "'");
          bad = true;
          if (v.kind == tok::open) {
            recover();
            return;
          }
        } else {
          if (!e.value.empty()) e.value += ' ';
          e.value += v.text;
        }
        ++pos_;
      }
      if (bad) continue;
      if (e.value.empty()) {
        errors_.add(e.loc, "key '" + e.key + "' in " + s.type + " '" + s.name + "' has no value");
        continue;
      }
      auto [it, fresh] = seen.emplace(e.key, e.loc.line);
      if (!fresh) {
        errors_.add(e.loc, "duplicate key '" + e.key + "' in " + s.type + " '" + s.name + "' (first at line " +
                               std::to_string(it->second) + ")");
        continue;
      }
      s.entries.push_back(std::move(e));
    }
  }

  std::vector<token> tokens_;
  std::string file_;
  error_list& errors_;
  std::size_t pos_ = 0;
};

// ---- typed values ----------------------------------------------------------------------------------------

class value_reader {
 public:
  value_reader(const stanza& s, error_list& errors) : s_(s), errors_(errors) {}

  std::optional<std::int64_t> integer(const entry& e, std::int64_t min, std::int64_t max) {
    auto v = parse_integer(e.value);
    if (!v) {
      errors_.add(e.loc, what() + ": '" + e.key + "' must be an integer, not '" + e.value + "'");
      return std::nullopt;
    }
    if (*v < min || *v > max) {
      errors_.add(e.loc, what() + ": '" + e.key + "' = " + e.value + " is out of range");
      return std::nullopt;
    }
    return v;
  }
  std::optional<located<int>> int_value(const entry& e) {
    auto v = integer(e, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    if (!v) return std::nullopt;
    return located<int>{static_cast<int>(*v), e.loc};
  }
  std::optional<located<bool>> bool_value(const entry& e) {
    auto v = parse_boolean(e.value);
    if (!v) {
      errors_.add(e.loc, what() + ": '" + e.key + "' must be true or false, not '" + e.value + "'");
      return std::nullopt;
    }
    return located<bool>{*v, e.loc};
  }
  // A whole number of GB, converted to MB.
  std::optional<located<std::uint64_t>> gigabytes(const entry& e) {
    auto v = integer(e, 0, std::numeric_limits<std::int64_t>::max() / 1024);
    if (!v) return std::nullopt;
    return located<std::uint64_t>{static_cast<std::uint64_t>(*v) * 1024, e.loc};
  }
  located<std::string> text(const entry& e) { return {e.value, e.loc}; }
  // `known`: the keys of the stanza, ", "-separated; the nearest one is offered, as for ducc.properties keys.
  void unknown(const entry& e, std::string_view known) {
    std::vector<std::string_view> keys;
    for (std::size_t at = 0; at < known.size();) {
      const auto comma = std::min(known.find(", ", at), known.size());
      keys.push_back(known.substr(at, comma - at));
      at = comma + 2;
    }
    std::string message = "unknown key '" + e.key + "' in " + what() + " (known: " + std::string(known) + ")";
    if (auto near = closest_name(e.key, keys)) message += "; did you mean " + *near + "?";
    errors_.add(e.loc, message);
  }
  std::string what() const { return s_.type + " '" + s_.name + "'"; }

 private:
  const stanza& s_;
  error_list& errors_;
};

void read_nodepool(const stanza& s, site_decls& site, std::vector<nodefile_ref>& nodefiles, error_list& errors) {
  value_reader r(s, errors);
  nodepool_decl pool;
  pool.name = s.name;
  pool.loc = s.loc;
  std::optional<located<std::string>> nodefile;
  for (const auto& e : s.entries) {
    if (e.key == "nodefile") {
      nodefile = r.text(e);
      pool.has_node_source = true;
    } else if (e.key == "parent") {
      pool.parent = r.text(e);
    } else if (e.key == "domain") {
      pool.domain = r.text(e);
    } else if (e.key == "share-quantum") {
      pool.quantum_mb = r.gigabytes(e);
    } else if (e.key == "search-order") {
      pool.search_order = r.int_value(e);
    } else {
      r.unknown(e, "nodefile, parent, domain, share-quantum, search-order");
    }
  }
  site.nodepools.push_back(std::move(pool));
  if (nodefile) nodefiles.push_back({site.nodepools.size() - 1, *nodefile});
}

void read_class(const stanza& s, site_decls& site, error_list& errors) {
  value_reader r(s, errors);
  class_decl c;
  c.name = s.name;
  c.loc = s.loc;
  c.parent = s.parent;
  for (const auto& e : s.entries) {
    const auto& k = e.key;
    if (k == "policy") {
      auto p = parse_policy(e.value);
      if (!p) {
        std::string message =
            r.what() + ": bad policy '" + e.value + "' (expected FAIR_SHARE, FIXED_SHARE or RESERVE)";
        if (auto near = closest_name(e.value, {"FAIR_SHARE", "FIXED_SHARE", "RESERVE"}))
          message += "; did you mean " + *near + "?";
        errors.add(e.loc, message);
      } else {
        c.policy = located<core::policy>{*p, e.loc};
      }
    } else if (k == "nodepool") {
      c.nodepool = r.text(e);
    } else if (k == "priority") {
      c.priority = r.int_value(e);
    } else if (k == "weight") {
      c.weight = r.int_value(e);
    } else if (k == "initialization-cap") {
      c.initialization_cap = r.int_value(e);
    } else if (k == "expand-by-doubling") {
      c.expand_by_doubling = r.bool_value(e);
    } else if (k == "use-prediction") {
      c.use_prediction = r.bool_value(e);
    } else if (k == "prediction-fudge") {
      if (auto v = r.integer(e, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max())) {
        c.prediction_fudge_ms = located<std::int64_t>{*v, e.loc};
      }
    } else if (k == "users") {
      std::vector<std::string> users;
      std::istringstream words(e.value);
      for (std::string word; words >> word;) users.push_back(word);
      c.users = located<std::vector<std::string>>{users, e.loc};
    } else if (k == "default") {
      c.is_default = r.bool_value(e);
    } else if (k == "abstract") {
      auto b = r.bool_value(e);
      c.is_abstract = b && b->value;
    } else if (k == "enforce") {
      r.bool_value(e);  // parsed, as DUCC does, and unused
    } else if (k == "debug") {
      // Names the class used for debug submissions; applied outside the RM.
    } else if (k == "reclaim-grace-ms") {  // rmbus extension
      if (auto v = r.integer(e, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max())) {
        c.reclaim_grace_ms = located<std::int64_t>{*v, e.loc};
      }
    } else if (k == "probe-first") {  // rmbus extension
      c.probe_first = r.bool_value(e);
    } else if (k == "cap" || k == "max-processes" || k == "max-machines") {
      // Deprecated; DUCC ignores them, and so do we, so a DUCC site behaves as it did (docs/configuration.md).
    } else {
      r.unknown(e, "policy, nodepool, priority, weight, initialization-cap, expand-by-doubling, use-prediction, "
                   "prediction-fudge, users, default, abstract, debug, enforce, cap, max-processes, max-machines, "
                   "reclaim-grace-ms, probe-first");
    }
  }
  site.classes.push_back(std::move(c));
}

void read_user(const stanza& s, site_decls& site, error_list& errors) {
  value_reader r(s, errors);
  user_decl u;
  u.name = s.name;
  u.loc = s.loc;
  constexpr std::string_view class_prefix = "max_allotment.";
  for (const auto& e : s.entries) {
    if (e.key == "max-allotment") {
      u.max_allotment_mb = r.gigabytes(e);
    } else if (e.key.starts_with(class_prefix) && e.key.size() > class_prefix.size()) {
      if (auto v = r.gigabytes(e)) {
        u.class_allotments_mb.push_back({{e.key.substr(class_prefix.size()), v->value}, e.loc});
      }
    } else if (e.key.find("allotment") != std::string::npos || e.key.starts_with(".")) {
      errors.add(e.loc, r.what() + ": malformed key '" + e.key + "' (expected max-allotment or max_allotment.<class>)");
    } else {
      r.unknown(e, "max-allotment, max_allotment.<class>");
    }
  }
  site.users.push_back(std::move(u));
}

}  // namespace

void parse_ducc_classes(std::string_view text, const std::string& file_name, site_decls& site,
                        std::vector<nodefile_ref>& nodefiles, error_list& errors) {
  stanza_reader reader(tokenize(text), file_name, errors);
  for (const auto& s : reader.read_all()) {
    if (s.name.empty()) continue;  // already reported
    if (s.type == "Nodepool") read_nodepool(s, site, nodefiles, errors);
    else if (s.type == "Class") read_class(s, site, errors);
    else read_user(s, site, errors);
  }
}

}  // namespace rmbus::config::detail
