// Type spellings in canonical form (normalizeTypeName): builtins, known typedefs, the standard
// library as users write it, declarators, template arguments.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "common/function_key.h"
#include "common/function_key_internal.h"

namespace perfhat::function_key_detail {

namespace {

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

}  // namespace

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

}  // namespace perfhat::function_key_detail

namespace perfhat {

using namespace function_key_detail;

std::string normalizeTypeName(std::string_view type) {
  Protector p;
  return normalizeTypeImpl(protect(withoutMarkers(type), p), p);
}

}  // namespace perfhat
