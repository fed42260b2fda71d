// What the function-key normaliser's files share (function_key.cc: keys; type_name.cc: types;
// function_key_text.cc: text scanning and the protected fragments). Internal to common/.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfhat::function_key_detail {

// Protected fragments are replaced by "\x01<index>\x02" while the text is scanned, so that
// operator names (`operator<`, `operator()`), `(anonymous namespace)` and lambda spellings do
// not disturb bracket matching; they are put back, already in canonical form, at the end.
inline constexpr char kOpen = '\x01';
inline constexpr char kClose = '\x02';
// Marks a method-const that GCC prints inside an enclosing-function component (`m() const::`).
inline constexpr char kConstMark = '\x04';

// Text scanning (function_key_text.cc; each is described where it is defined).
std::string withoutMarkers(std::string_view s);
bool isIdent(char c);
bool isOpenBracket(char c);
bool isCloseBracket(char c);
std::string trim(std::string_view s);
std::string foldSpaces(std::string_view s);
size_t matchForward(std::string_view s, size_t open);
size_t matchBackward(std::string_view s, size_t close);
std::vector<std::string> splitTopLevel(std::string_view s, std::string_view sep);
bool startsWith(std::string_view s, std::string_view p);
bool endsWith(std::string_view s, std::string_view p);
std::string replaceIdent(std::string_view s, std::string_view from, std::string_view to);

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
std::string protect(std::string_view in, Protector& p);

// Types (type_name.cc).
std::string normalizeTypeImpl(std::string_view type, Protector& p);
struct Component {
  std::string name;
  std::optional<std::vector<std::string>> args;  // template arguments, canonical
};

std::vector<Component> parseQualified(std::string_view s, Protector& p);
std::string joinArgs(const std::vector<std::string>& args);
void canonicalizeStd(std::vector<Component>& comps);
std::string renderQualified(const std::vector<Component>& comps, const Protector& p);
std::string dropTopLevelCv(std::string t);

}  // namespace perfhat::function_key_detail
