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

#include "common/function_key_internal.h"

namespace perfhat::function_key_detail {

namespace {

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

// The name without its return type and specifiers: it starts after the last top-level space.
std::string withoutReturnType(std::string name_part) {
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
  return name_part;
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
  name_part = withoutReturnType(name_part);
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

}  // namespace perfhat::function_key_detail

namespace perfhat {

using namespace function_key_detail;

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
