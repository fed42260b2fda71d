#include "site_symbol.h"

#include <cctype>

namespace perfhat::detail {
namespace {

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '~';
}

}  // namespace

std::string function_base_name(std::string_view signature) {
  std::string s(signature.substr(0, signature.find(" [with ")));  // GCC's template bindings
  // The demangler's "(anonymous namespace)" is the only parenthesis that is not a parameter list.
  for (std::size_t p; (p = s.find("(anonymous namespace)")) != std::string::npos;)
    s.replace(p, 21, "{anonymous}");
  if (s.find("lambda") != std::string::npos) return "";
  // The function's own parameter list: the last '(' outside template arguments and other
  // parentheses (a local class's member follows its enclosing function's list).
  int angle = 0, paren = 0;
  std::size_t open = std::string::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') {
      ++angle;
    } else if (s[i] == '>') {
      --angle;
    } else if (s[i] == '(') {
      if (angle == 0 && paren == 0) open = i;
      ++paren;
    } else if (s[i] == ')') {
      --paren;
    }
  }
  if (open == std::string::npos || open == 0) return "";
  std::size_t end = open;
  if (s[end - 1] == '>') {  // template arguments of the function itself
    int d = 0;
    while (end > 0) {
      --end;
      if (s[end] == '>') ++d;
      if (s[end] == '<' && --d == 0) break;
    }
    if (d != 0) return "";
  }
  std::size_t begin = end;
  while (begin > 0 && identifier_char(s[begin - 1])) --begin;
  std::string name = s.substr(begin, end - begin);
  if (name.empty() || name.rfind("operator", 0) == 0 ||
      std::isdigit(static_cast<unsigned char>(name[0])) != 0)
    return "";
  return name;
}

bool symbol_is_another_function(std::string_view pretty_function, std::string_view demangled) {
  const std::string a = function_base_name(pretty_function);
  const std::string b = function_base_name(demangled);
  return !a.empty() && !b.empty() && a != b;
}

}  // namespace perfhat::detail
