#include "common/function_key.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace perfhat {
namespace {

// Protected fragments are replaced by "\x01<index>\x02" while the text is scanned, so that
// operator names (`operator<`, `operator()`), `(anonymous namespace)` and lambda spellings do
// not disturb bracket matching; they are put back, already in canonical form, at the end.
constexpr char kOpen = '\x01';
constexpr char kClose = '\x02';
// Marks a method-const that GCC prints inside an enclosing-function component (`m() const::`).
constexpr char kConstMark = '\x04';

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

class Protector {
 public:
  std::string put(std::string canonical) {
    fragments_.push_back(std::move(canonical));
    return std::string(1, kOpen) + std::to_string(fragments_.size() - 1) + kClose;
  }
  // A fragment can only hold placeholders put before it, so each one restores with a lower
  // bound: the recursion ends whatever the text holds.
  std::string restore(std::string_view s) const { return restore(s, fragments_.size()); }
  std::string restore(std::string_view s, size_t below) const {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == kOpen) {
        size_t e = s.find(kClose, i);
        if (e == std::string_view::npos) break;
        size_t idx = std::strtoul(std::string(s.substr(i + 1, e - i - 1)).c_str(), nullptr, 10);
        if (idx < below) out += restore(fragments_[idx], idx);
        i = e;
      } else if (s[i] == kConstMark) {
        out += " const";
      } else {
        out.push_back(s[i]);
      }
    }
    return out;
  }

 private:
  std::vector<std::string> fragments_;
};

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

// Canonical spelling of builtin type words (`long unsigned int` → `unsigned long`).
std::string canonicalBuiltin(const std::vector<std::string>& words) {
  int longs = 0, shorts = 0;
  bool is_unsigned = false, is_signed = false, has_int = false;
  std::string other;
  for (const auto& w : words) {
    if (w == "long")
      ++longs;
    else if (w == "short")
      ++shorts;
    else if (w == "unsigned")
      is_unsigned = true;
    else if (w == "signed")
      is_signed = true;
    else if (w == "int")
      has_int = true;
    else
      other = w;  // char, double, bool, ...
  }
  std::string base;
  if (other == "char") {
    base = is_unsigned ? "unsigned char" : is_signed ? "signed char" : "char";
    return base;
  }
  if (other == "double") return longs ? "long double" : "double";
  if (!other.empty()) return other;
  (void)has_int;
  if (shorts)
    base = "short";
  else if (longs == 1)
    base = "long";
  else if (longs >= 2)
    base = "long long";
  else
    base = "int";
  return is_unsigned ? "unsigned " + base : base;
}

bool isBuiltinWord(std::string_view w) {
  static const char* kWords[] = {"void",    "bool",   "char",     "char8_t", "char16_t", "char32_t",
                                 "wchar_t", "short",  "int",      "long",    "signed",   "unsigned",
                                 "float",   "double", "__int128", "auto"};
  return std::any_of(std::begin(kWords), std::end(kWords), [&](const char* k) { return w == k; });
}

// Typedefs whose target is fixed on LP64 Linux (what the demangler shows instead).
const std::map<std::string, std::string, std::less<>>& knownTypedefs() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"size_t", "unsigned long"},    {"ssize_t", "long"},
      {"ptrdiff_t", "long"},          {"intptr_t", "long"},
      {"uintptr_t", "unsigned long"}, {"int8_t", "signed char"},
      {"uint8_t", "unsigned char"},   {"int16_t", "short"},
      {"uint16_t", "unsigned short"}, {"int32_t", "int"},
      {"uint32_t", "unsigned int"},   {"int64_t", "long"},
      {"uint64_t", "unsigned long"},  {"intmax_t", "long"},
      {"uintmax_t", "unsigned long"},
  };
  return m;
}

std::string normalizeTypeImpl(std::string_view type, Protector& p);

// `3ul` → `3` (nm prints literal suffixes on non-type template arguments, libclang does not).
std::string normalizeTemplateArg(std::string_view arg, Protector& p) {
  std::string a = trim(arg);
  if (!a.empty() && (std::isdigit(static_cast<unsigned char>(a[0])) || a[0] == '-')) {
    size_t e = a.size();
    while (e > 1 && (a[e - 1] == 'u' || a[e - 1] == 'l' || a[e - 1] == 'U' || a[e - 1] == 'L')) --e;
    return a.substr(0, e);
  }
  if (a == "true" || a == "false") return a;
  return normalizeTypeImpl(a, p);
}

struct Component {
  std::string name;
  std::optional<std::vector<std::string>> args;  // template arguments, canonical
};

// Parses `a::b<x, y>::c` (possibly with a leading `::`) into components.
std::vector<Component> parseQualified(std::string_view s, Protector& p) {
  std::vector<Component> out;
  for (auto& part : splitTopLevel(s, "::")) {
    if (part.empty()) continue;
    Component c;
    size_t lt = part.find('<');
    if (lt != std::string::npos && endsWith(part, ">")) {
      c.name = trim(part.substr(0, lt));
      std::string inner = part.substr(lt + 1, part.size() - lt - 2);
      c.args.emplace();
      if (!trim(inner).empty())
        for (auto& a : splitTopLevel(inner, ",")) c.args->push_back(normalizeTemplateArg(a, p));
    } else {
      c.name = part;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string joinArgs(const std::vector<std::string>& args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += args[i];
  }
  return s;
}

// Standard library spelled the way users write it.
void canonicalizeStd(std::vector<Component>& comps) {
  if (comps.empty() || comps[0].name != "std") return;
  // Inline namespaces of libstdc++ / libc++.
  comps.erase(std::remove_if(comps.begin() + 1, comps.end(),
                             [](const Component& c) {
                               return c.name == "__cxx11" || c.name == "__1" || c.name == "__debug";
                             }),
              comps.end());
  if (comps.size() != 2 || !comps[1].args) return;
  auto& args = *comps[1].args;
  static const char* kDefaults[] = {"std::allocator<", "std::less<",        "std::hash<",
                                    "std::equal_to<",  "std::char_traits<", "std::default_delete<"};
  while (args.size() > 1 && std::any_of(std::begin(kDefaults), std::end(kDefaults),
                                        [&](const char* d) { return startsWith(args.back(), d); }))
    args.pop_back();
  static const std::map<std::string, std::string, std::less<>> kCharAliases = {
      {"basic_string", "string"},
      {"basic_string_view", "string_view"},
      {"basic_ostream", "ostream"},
      {"basic_istream", "istream"},
      {"basic_iostream", "iostream"},
      {"basic_stringstream", "stringstream"},
      {"basic_ostringstream", "ostringstream"},
      {"basic_istringstream", "istringstream"},
      {"basic_fstream", "fstream"},
      {"basic_ifstream", "ifstream"},
      {"basic_ofstream", "ofstream"},
      {"basic_regex", "regex"},
  };
  auto it = kCharAliases.find(comps[1].name);
  if (it != kCharAliases.end() && args.size() == 1) {
    static const std::map<std::string, std::string, std::less<>> kPrefix = {{"char", ""},
                                                                            {"wchar_t", "w"},
                                                                            {"char8_t", "u8"},
                                                                            {"char16_t", "u16"},
                                                                            {"char32_t", "u32"}};
    auto pre = kPrefix.find(args[0]);
    if (pre != kPrefix.end() &&
        (pre->first == "char" || it->first == "basic_string" || it->first == "basic_string_view")) {
      comps[1].name = pre->second + it->second;
      comps[1].args.reset();
    }
  }
}

std::string renderQualified(const std::vector<Component>& comps, const Protector& p) {
  std::string out;
  for (size_t i = 0; i < comps.size(); ++i) {
    if (i) out += "::";
    out += comps[i].name;
    if (comps[i].args) out += "<" + joinArgs(*comps[i].args) + ">";
  }
  (void)p;
  return out;
}

std::string fixSpacing(std::string_view s) {
  // Fallback for shapes we do not model (function pointers, arrays): one space before the
  // first `*`/`&` run, none inside it.
  std::string f = foldSpaces(s), out;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if ((c == '*' || c == '&') && !out.empty() && out.back() != ' ' && out.back() != '*' &&
        out.back() != '&' && out.back() != '(')
      out.push_back(' ');
    if (c == ' ' && i + 1 < f.size() && (f[i + 1] == '*' || f[i + 1] == '&') && !out.empty() &&
        (out.back() == '*' || out.back() == '&'))
      continue;
    out.push_back(c);
  }
  return out;
}

std::string dropTopLevelCv(std::string t);

// Canonical spelling of a declarator group's inside, `( * const)` → `*const`,
// `(ns::C:: *)` → `ns::C::*`: no space next to `*` or `&`, one between words.
std::string declaratorGroup(std::string_view inner) {
  std::string f = foldSpaces(inner), out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == ' ' &&
        ((!out.empty() && (out.back() == '*' || out.back() == '&' || out.back() == ':')) ||
         (i + 1 < f.size() && (f[i + 1] == '*' || f[i + 1] == '&'))))
      continue;
    out.push_back(f[i]);
  }
  return out;
}

// Types with a declarator after the base type: pointers and references to functions and
// arrays, pointers to members, function types (`std::function<void (const S &)>`). The base
// type and every parameter type are canonical like any other, so the two sides' spellings of
// one type agree: `int (*)(ns::Slice const&, void*)` → `int (*)(const ns::Slice &, void *)`,
// `char (&) [16]` → `char (&)[16]`, `int (C:: *)(int) const` → `int (C::*)(int) const`.
std::string normalizeDeclaratorType(const std::string& s, size_t cut, Protector& p) {
  // Parameter types recurse here: text from outside nests as deep as it likes, real types do
  // not (beyond this depth the spelling is only spaced, like shapes we do not model).
  static thread_local int depth = 0;
  if (depth >= 32) return p.restore(fixSpacing(s));
  struct Nest {
    Nest() { ++depth; }
    ~Nest() { --depth; }
  } nest;
  std::string out = normalizeTypeImpl(s.substr(0, cut), p);
  size_t i = cut;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ') {
      ++i;
    } else if (c == '(') {
      size_t e = matchForward(s, i);
      if (e == std::string::npos) return p.restore(fixSpacing(s));
      std::string inner = trim(s.substr(i + 1, e - i - 1));
      bool group = !inner.empty() && (inner[0] == '*' || inner[0] == '&' || inner[0] == '^' ||
                                      inner.find("::*") != std::string::npos ||
                                      inner.find(":: *") != std::string::npos);
      if (group) {
        out += (out.empty() || out.back() == '(' ? "(" : " (") + declaratorGroup(inner) + ")";
      } else {
        std::string params;
        if (!inner.empty() && inner != "void") {
          for (auto& a : splitTopLevel(inner, ",")) {
            std::string t = trim(a);
            if (!params.empty()) params += ", ";
            params += t == "..." ? t : dropTopLevelCv(normalizeTypeImpl(t, p));
          }
        }
        out += (!out.empty() && out.back() != ')' ? " (" : "(") + params + ")";
      }
      i = e + 1;
    } else if (c == '[') {
      size_t e = s.find(']', i);
      if (e == std::string::npos) return p.restore(fixSpacing(s));
      std::string n = s.substr(i + 1, e - i - 1);
      n.erase(std::remove(n.begin(), n.end(), ' '), n.end());
      out += (out.empty() || out.back() == ')' || out.back() == ']' ? "[" : " [") + n + "]";
      i = e + 1;
    } else {
      // Trailing qualifiers of a function type: `const`, `volatile`, `&`, `&&`, `noexcept`.
      size_t start = i;
      if (c == '&') {
        while (i < s.size() && s[i] == '&') ++i;
      } else {
        while (i < s.size() && isIdent(s[i])) ++i;
      }
      if (i == start) return p.restore(fixSpacing(s));
      out += " " + s.substr(start, i - start);
    }
  }
  return p.restore(out);
}

std::string normalizeTypeImpl(std::string_view type, Protector& p) {
  std::string s = foldSpaces(type);
  if (s.empty()) return s;
  bool base_const = false, base_volatile = false;
  std::vector<std::string> builtin;
  std::string name;  // canonical qualified name of the base type
  std::string ops;   // declarator: "*", "&", "*const &", ...
  bool after_ops = false;
  bool pack = false;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '*' || c == '&') {
      if (!ops.empty() && ops.back() != '*' && ops.back() != '&') ops += ' ';
      ops.push_back(c);
      after_ops = true;
      ++i;
      continue;
    }
    if (s.compare(i, 3, "...") == 0) {
      pack = true;
      i += 3;
      continue;
    }
    if ((c == '(' || c == '[') && i > 0) return normalizeDeclaratorType(s, i, p);
    if (c == '(' || c == '[' || c == ')' || c == ']' || c == '<' || c == '>' || c == ',') {
      return p.restore(fixSpacing(s));  // not a shape we model: keep, spacing only
    }
    // A word or a qualified name with template arguments.
    size_t start = i;
    while (i < s.size()) {
      if (isIdent(s[i])) {
        ++i;
      } else if (s.compare(i, 2, "::") == 0) {
        i += 2;
      } else if (s[i] == '<') {
        size_t e = matchForward(s, i);
        if (e == std::string::npos) return p.restore(fixSpacing(s));
        i = e + 1;
      } else {
        break;
      }
    }
    if (i == start) return p.restore(fixSpacing(s));
    std::string word = s.substr(start, i - start);
    if (word == "const" || word == "volatile") {
      if (after_ops) {
        if (!ops.empty() && ops.back() != '*' && ops.back() != '&') ops += ' ';
        ops += word;
      } else if (word == "const") {
        base_const = true;
      } else {
        base_volatile = true;
      }
    } else if (word == "struct" || word == "class" || word == "enum" || word == "union" ||
               word == "typename") {
      // elaborated type specifiers carry no identity
    } else if (isBuiltinWord(word) && name.empty()) {
      builtin.push_back(word);
    } else if (name.empty() && builtin.empty()) {
      auto comps = parseQualified(word, p);
      canonicalizeStd(comps);
      name = renderQualified(comps, p);
      std::string bare = startsWith(name, "std::") ? name.substr(5) : name;
      auto td = knownTypedefs().find(bare);
      if (td != knownTypedefs().end()) name = td->second;
    } else {
      return p.restore(fixSpacing(s));  // two names: not a type we model
    }
  }
  if (name.empty()) name = canonicalBuiltin(builtin);
  std::string out;
  if (base_const) out += "const ";
  if (base_volatile) out += "volatile ";
  out += name;
  if (!ops.empty()) out += " " + ops;
  if (pack) out += "...";
  return p.restore(out);
}

// Drops a parameter's top-level cv (not part of the function type).
std::string dropTopLevelCv(std::string t) {
  for (;;) {
    if (endsWith(t, "*const"))
      t.resize(t.size() - 5);
    else if (endsWith(t, "*volatile"))
      t.resize(t.size() - 8);
    else
      break;
  }
  if (t.find_first_of("*&") == std::string::npos) {
    if (startsWith(t, "const ")) t = t.substr(6);
    if (startsWith(t, "volatile ")) t = t.substr(9);
  }
  return t;
}

struct WithArg {
  std::string name;
  std::string value;
};

// Removes a trailing `[with T = int; U = x]` (GCC) or `[T = int, U = x]` (Clang).
std::vector<WithArg> stripWith(std::string& s) {
  std::vector<WithArg> out;
  std::string t = trim(s);
  if (!endsWith(t, "]")) return out;
  size_t open = matchBackward(t, t.size() - 1);
  if (open == std::string::npos || open == 0 || t[open - 1] != ' ') return out;
  std::string inner = t.substr(open + 1, t.size() - open - 2);
  if (startsWith(inner, "with ")) inner = inner.substr(5);
  if (inner.find(" = ") == std::string::npos) return out;
  s = trim(t.substr(0, open));
  auto parts = splitTopLevel(inner, ";");
  if (parts.size() == 1) parts = splitTopLevel(inner, ",");
  for (auto& part : parts) {
    size_t eq = part.find(" = ");
    if (eq == std::string::npos) continue;
    std::string value = trim(part.substr(eq + 3));
    if (startsWith(value, "{")) continue;  // parameter pack: not substituted
    out.push_back({trim(part.substr(0, eq)), value});
  }
  return out;
}

std::string normalizeKeyImpl(std::string_view spelling, Protector& p);

// Renders the name part (`a::b<..>::f`, possibly with enclosing functions) canonically.
std::string renderName(std::string_view name, Protector& p) {
  auto parts = splitTopLevel(name, "::");
  // An enclosing function (lambda, local class): everything up to the last component holding
  // a parameter list is a function key of its own.
  size_t last_fn = std::string::npos;
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    if (parts[i].find('(') != std::string::npos) last_fn = i;
  std::string prefix;
  size_t first = 0;
  if (last_fn != std::string::npos) {
    std::string enclosing;
    for (size_t i = 0; i <= last_fn; ++i) enclosing += (i ? "::" : "") + parts[i];
    std::string quals;
    if (!enclosing.empty() && enclosing.back() == kConstMark) {
      enclosing.pop_back();
      quals = " const";
    }
    prefix = normalizeKeyImpl(p.restore(enclosing) + quals, p) + "::";
    first = last_fn + 1;
  }
  std::vector<Component> comps;
  for (size_t i = first; i < parts.size(); ++i) {
    auto c = parseQualified(parts[i], p);
    for (auto& x : c) comps.push_back(std::move(x));
  }
  canonicalizeStd(comps);
  return prefix + p.restore(renderQualified(comps, p));
}

std::string normalizeKeyImpl(std::string_view spelling, Protector& p) {
  std::string s = foldSpaces(spelling);
  auto with = stripWith(s);
  for (auto& w : with) s = replaceIdent(s, w.name, w.value);
  s = protect(s, p);
  // GCC writes an enclosing const method as `m() const::<lambda()>`.
  for (size_t pos = s.find(") const::"); pos != std::string::npos; pos = s.find(") const::"))
    s.replace(pos, 9, std::string(")") + kConstMark + "::");
  s = foldSpaces(s);

  // Trailing qualifiers.
  std::string rest = s;
  bool is_const = false, is_volatile = false;
  std::string ref;
  for (bool again = true; again;) {
    again = false;
    rest = trim(rest);
    for (std::string_view q : {"const", "volatile", "noexcept", "override", "final", "&&", "&"}) {
      if (endsWith(rest, q) && rest.size() > q.size() &&
          (q[0] == '&' || !isIdent(rest[rest.size() - q.size() - 1]))) {
        std::string before = trim(rest.substr(0, rest.size() - q.size()));
        if (before.empty()) continue;
        if (q == "const") is_const = true;
        if (q == "volatile") is_volatile = true;
        if (q[0] == '&') ref = std::string(q);
        rest = before;
        again = true;
        break;
      }
    }
  }
  std::string name_part, params_part;
  bool has_params = false;
  if (endsWith(rest, ")")) {
    size_t open = matchBackward(rest, rest.size() - 1);
    if (open != std::string::npos && open > 0) {
      name_part = rest.substr(0, open);
      params_part = rest.substr(open + 1, rest.size() - open - 2);
      has_params = true;
    }
  }
  if (!has_params) {
    name_part = s;  // no parameter list: a bare symbol (`c_function`) or a lambda
    is_const = is_volatile = false;
    ref.clear();
  }
  // Strip the return type and specifiers: the name starts after the last top-level space.
  {
    int depth = 0;
    size_t cut = std::string::npos;
    for (size_t i = 0; i < name_part.size(); ++i) {
      if (isOpenBracket(name_part[i]))
        ++depth;
      else if (isCloseBracket(name_part[i]))
        depth = std::max(0, depth - 1);
      else if (depth == 0 && name_part[i] == ' ' &&
               (i + 1 >= name_part.size() || name_part[i + 1] != '<'))  // `operator< <int>`
        cut = i;
    }
    if (cut != std::string::npos) name_part = name_part.substr(cut + 1);
    size_t b = name_part.find_first_not_of("*&");
    name_part = b == std::string::npos ? "" : name_part.substr(b);
  }
  // Template arguments given by `[with T = …]` that belong to the function itself (not to an
  // enclosing class template) are appended to the function's name: `maxOf<int>`.
  if (!with.empty()) {
    auto parts = splitTopLevel(name_part, "::");
    std::string qualifier;
    for (size_t i = 0; i + 1 < parts.size(); ++i) qualifier += parts[i] + "::";
    std::string original_qualifier = qualifier;  // after substitution: compare values
    std::vector<std::string> fn_args;
    for (auto& w : with) {
      // The qualifier was substituted, so a class parameter shows up as its value.
      std::string norm_value = normalizeTypeImpl(w.value, p);
      bool in_class = false;
      for (auto& comp : parseQualified(original_qualifier, p))
        if (comp.args)
          for (auto& a : *comp.args)
            if (a == norm_value) in_class = true;
      if (!in_class) fn_args.push_back(norm_value);
    }
    if (!fn_args.empty() && !parts.empty() && parts.back().find('<') == std::string::npos) {
      name_part = qualifier + parts.back() + "<" + joinArgs(fn_args) + ">";
    }
  }
  // `…::lambda::operator()` is the lambda itself.
  std::string name = renderName(name_part, p);
  bool is_lambda = false;
  for (std::string_view suffix : {"::operator()"}) {
    if (endsWith(name, suffix)) {
      std::string before = name.substr(0, name.size() - suffix.size());
      size_t sep = before.rfind("::");
      std::string last = sep == std::string::npos ? before : before.substr(sep + 2);
      if (startsWith(last, "lambda")) {
        name = before;
        is_lambda = true;
      }
    }
  }
  {
    size_t sep = name.rfind("::");
    std::string last = sep == std::string::npos ? name : name.substr(sep + 2);
    if (last == "lambda" || startsWith(last, "lambda#")) is_lambda = true;
  }
  if (is_lambda || !has_params) return name;

  std::string out = name + "(";
  std::string params = trim(params_part);
  if (params != "void") {
    auto list = params.empty() ? std::vector<std::string>{} : splitTopLevel(params, ",");
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += ", ";
      out += list[i] == "..." ? "..." : dropTopLevelCv(normalizeTypeImpl(list[i], p));
    }
  }
  out += ")";
  if (is_const) out += " const";
  if (is_volatile) out += " volatile";
  if (!ref.empty()) out += " " + ref;
  return out;
}

}  // namespace

bool isMangledName(std::string_view s) {
  return s.size() > 2 && s[0] == '_' && s[1] == 'Z' && s.find(' ') == std::string_view::npos;
}

std::string demangle(std::string_view mangled) {
  if (!isMangledName(mangled)) return "";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(std::string(mangled).c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string();
}

std::string normalizeTypeName(std::string_view type) {
  Protector p;
  return normalizeTypeImpl(protect(withoutMarkers(type), p), p);
}

std::string normalizeFunctionKey(std::string_view spelling) {
  std::string text = trim(withoutMarkers(spelling));
  if (isMangledName(text)) {
    std::string d = demangle(text);
    if (!d.empty()) text = d;
  }
  if (text.size() > 4096) return foldSpaces(text);  // not a signature; do not spend time on it
  Protector p;
  return p.restore(normalizeKeyImpl(text, p));
}

std::string qualifiedName(std::string_view key) {
  std::string k = trim(withoutMarkers(key));
  // Drop trailing qualifiers and the parameter list.
  Protector p;
  std::string s = protect(k, p);
  for (bool again = true; again;) {
    again = false;
    for (std::string_view q : {" const", " volatile", " &&", " &"}) {
      if (endsWith(s, q)) {
        s.resize(s.size() - q.size());
        again = true;
      }
    }
  }
  if (endsWith(s, ")")) {
    size_t open = matchBackward(s, s.size() - 1);
    if (open != std::string::npos && open > 0) s = s.substr(0, open);
  }
  // Remove template argument lists at top level of the name (instantiations aggregate); an
  // enclosing function's parameter list stays, it is part of the identity.
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') {
      size_t e = matchForward(s, i);
      if (e == std::string::npos) break;
      if (!out.empty() && out.back() == ' ') out.pop_back();  // `operator< <int>`
      i = e;
      continue;
    }
    if (s[i] == '(') {
      size_t e = matchForward(s, i);
      if (e == std::string::npos) break;
      out += s.substr(i, e - i + 1);
      i = e;
      continue;
    }
    out.push_back(s[i]);
  }
  out = p.restore(out);
  size_t hash = out.rfind("::lambda#");
  if (hash != std::string::npos && out.find("::", hash + 2) == std::string::npos)
    out.resize(hash + 8);
  return out;
}

std::string memberSignature(std::string_view key) {
  std::string name = qualifiedName(key);
  int depth = 0;
  size_t last = std::string::npos;
  for (size_t i = 0; i + 1 < name.size(); ++i) {
    if (name[i] == '(' || name[i] == '<')
      ++depth;
    else if ((name[i] == ')' || name[i] == '>') && depth > 0)
      --depth;
    else if (depth == 0 && name[i] == ':' && name[i + 1] == ':')
      last = i;
  }
  if (last == std::string::npos) return "";
  std::string member = name.substr(last + 2);
  size_t pos = key.rfind("::" + member + "(");
  return pos == std::string::npos ? "" : std::string(key.substr(pos + 2));
}

}  // namespace perfhat
