// Text scanning for the key normaliser: brackets, top-level splits, identifiers, and the
// protected fragments (operator names, lambdas, anonymous scopes) replaced by placeholders.
#include <algorithm>
#include <cctype>
#include <string>

#include "common/function_key.h"
#include "common/function_key_internal.h"

namespace perfhat::function_key_detail {

// The markers are control characters no C++ spelling contains; outside text that does (found by
// fuzzing) would forge placeholders, so they are dropped on the way in.
std::string withoutMarkers(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    if (c != kOpen && c != kClose && c != kConstMark) out.push_back(c);
  return out;
}

bool isIdent(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == kOpen ||
         c == kClose;
}

bool isOpenBracket(char c) { return c == '(' || c == '[' || c == '{' || c == '<'; }
bool isCloseBracket(char c) { return c == ')' || c == ']' || c == '}' || c == '>'; }

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Collapses whitespace runs into one space and trims.
std::string foldSpaces(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
    } else {
      if (space) out.push_back(' ');
      space = false;
      out.push_back(c);
    }
  }
  return out;
}

// Index of the bracket closing the one at `open`, or npos. Brackets of all kinds nest.
size_t matchForward(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (isOpenBracket(s[i])) ++depth;
    if (isCloseBracket(s[i]) && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// Index of the bracket opening the one at `close`, or npos.
size_t matchBackward(std::string_view s, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (isCloseBracket(s[i])) ++depth;
    if (isOpenBracket(s[i]) && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// Splits at `sep` occurring outside any brackets.
std::vector<std::string> splitTopLevel(std::string_view s, std::string_view sep) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (isOpenBracket(c))
      ++depth;
    else if (isCloseBracket(c))
      depth = std::max(0, depth - 1);
    else if (depth == 0 && s.substr(i, sep.size()) == sep) {
      parts.push_back(trim(s.substr(start, i - start)));
      i += sep.size() - 1;
      start = i + 1;
    }
  }
  parts.push_back(trim(s.substr(start)));
  return parts;
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// Replaces whole-identifier occurrences of `from` with `to`.
std::string replaceIdent(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, from.size()) == from && (i == 0 || !isIdent(s[i - 1])) &&
        (i + from.size() >= s.size() || !isIdent(s[i + from.size()]))) {
      out += to;
      i += from.size();
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// Replaces the spellings that contain brackets or spaces but are single names.
std::string protect(std::string_view in, Protector& p) {
  std::string s(in);
  auto replaceAll = [&](std::string_view from, const std::string& to) {
    for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
      s.replace(pos, from.size(), to);
  };
  // ABI tags carry no identity.
  for (size_t pos = s.find("[abi:"); pos != std::string::npos; pos = s.find("[abi:", pos)) {
    size_t e = s.find(']', pos);
    if (e == std::string::npos) break;
    s.erase(pos, e - pos + 1);
  }
  replaceAll("(anonymous namespace)", p.put("(anonymous namespace)"));
  replaceAll("{anonymous}", p.put("(anonymous namespace)"));
  replaceAll("(anonymous class)", p.put("lambda"));
  replaceAll("(anonymous struct)", p.put("(anonymous struct)"));
  // GCC pretty `<lambda(int)>`, nm `{lambda(int)#2}`, Clang pretty `(lambda at f.cc:3:5)`.
  for (size_t pos = s.find("<lambda("); pos != std::string::npos; pos = s.find("<lambda(")) {
    size_t e = matchForward(s, pos + 7);
    if (e == std::string::npos || e + 1 >= s.size() || s[e + 1] != '>') break;
    s.replace(pos, e + 2 - pos, p.put("lambda"));
  }
  for (size_t pos = s.find("{lambda("); pos != std::string::npos; pos = s.find("{lambda(")) {
    size_t e = matchForward(s, pos);
    if (e == std::string::npos) break;
    std::string inner = s.substr(pos, e - pos);
    size_t hash = inner.rfind('#');
    std::string name = "lambda";
    if (hash != std::string::npos) name += "#" + inner.substr(hash + 1);
    s.replace(pos, e + 1 - pos, p.put(name));
  }
  for (size_t pos = s.find("(lambda at "); pos != std::string::npos; pos = s.find("(lambda at ")) {
    size_t e = s.find(')', pos);
    if (e == std::string::npos) break;
    s.replace(pos, e + 1 - pos, p.put("lambda"));
  }
  // Clang's closure types in symbols: `::$_3::` is the 4th lambda.
  for (size_t pos = s.find("::$_"); pos != std::string::npos; pos = s.find("::$_", pos + 2)) {
    size_t e = pos + 4;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    if (e == pos + 4) continue;
    int n = std::atoi(s.substr(pos + 4, e - pos - 4).c_str());
    s.replace(pos + 2, e - pos - 2, p.put("lambda#" + std::to_string(n + 1)));
  }
  // Operator names.
  for (size_t pos = s.find("operator"); pos != std::string::npos;
       pos = s.find("operator", pos + 1)) {
    if ((pos > 0 && isIdent(s[pos - 1])) || (pos + 8 < s.size() && isIdent(s[pos + 8]))) continue;
    size_t i = pos + 8;
    while (i < s.size() && s[i] == ' ') ++i;
    std::string name;
    size_t end = i;
    if (s.compare(i, 2, "()") == 0) {
      name = "operator()";
      end = i + 2;
    } else if (s.compare(i, 2, "[]") == 0) {
      name = "operator[]";
      end = i + 2;
    } else if (s.compare(i, 2, "\"\"") == 0) {
      end = i + 2;
      while (end < s.size() && s[end] == ' ') ++end;
      size_t id = end;
      while (end < s.size() && isIdent(s[end])) ++end;
      name = "operator\"\"" + s.substr(id, end - id);
    } else if (i < s.size() && std::string_view("+-*/%^&|~!=<>,").find(s[i]) != std::string::npos) {
      while (end < s.size() && std::string_view("+-*/%^&|~!=<>,").find(s[end]) != std::string::npos)
        ++end;
      // The longest operator the run starts with: in `operator<<<>(…)` (a template's key) and
      // `operator< <int>(…)` (a demangled instantiation) a template argument list follows.
      static constexpr std::string_view kOps[] = {
          "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
          "--",  "+=",  "-=",  "*=",  "/=", "%=", "^=", "&=", "|=", "->", "+",  "-",  "*",
          "/",   "%",   "^",   "&",   "|",  "~",  "!",  "=",  "<",  ">",  ","};
      std::string_view run(s.data() + i, end - i);
      for (std::string_view op : kOps)
        if (run.substr(0, op.size()) == op) {
          end = i + op.size();
          break;
        }
      name = "operator" + s.substr(i, end - i);
      // `operator<< <char [2]>(…)`: the space before the template arguments goes too.
      size_t after = end;
      while (after < s.size() && s[after] == ' ') ++after;
      // (`operator< <int>` keeps one: `operator<<int>` would read as `operator<<`.)
      if (after > end && after < s.size() && s[after] == '<')
        end = name.back() == '<' ? after - 1 : after;
    } else if (s.compare(i, 3, "new") == 0 || s.compare(i, 6, "delete") == 0) {
      end = i + (s[i] == 'n' ? 3 : 6);
      if (s.compare(end, 2, "[]") == 0) end += 2;
      name = "operator " + s.substr(i, end - i);
    } else {
      // Conversion operator: the type runs to the parameter list.
      end = s.find('(', i);
      if (end == std::string::npos) continue;
      name = "operator " + normalizeTypeName(s.substr(i, end - i));
    }
    std::string ph = p.put(name);
    s.replace(pos, end - pos, ph);
  }
  return s;
}

}  // namespace perfhat::function_key_detail
