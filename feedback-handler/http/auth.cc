#include "feedback-handler/http/auth.h"

namespace perfhat::handler {

bool constantTimeEquals(std::string_view a, std::string_view b) {
  // Length differences still walk the longer input: time depends only on max(|a|, |b|).
  size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned diff = static_cast<unsigned>(a.size() ^ b.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

TokenAuth::TokenAuth(std::vector<std::string> rw, std::vector<std::string> ro)
    : rw_(std::move(rw)), ro_(std::move(ro)) {}

AuthResult TokenAuth::check(std::string_view header, Access access) const {
  if (!enabled()) return AuthResult::kOk;
  constexpr std::string_view kPrefix = "Bearer ";
  if (header.size() <= kPrefix.size()) return AuthResult::kMissing;
  // The scheme is case-insensitive (RFC 7235).
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kPrefix[i]))) {
      return AuthResult::kMissing;
    }
  }
  std::string_view token = header.substr(kPrefix.size());
  bool rw = false, ro = false;
  for (const auto& t : rw_) rw |= constantTimeEquals(token, t);
  for (const auto& t : ro_) ro |= constantTimeEquals(token, t);
  if (rw) return AuthResult::kOk;
  if (ro) return access == Access::kRead ? AuthResult::kOk : AuthResult::kForbidden;
  return AuthResult::kInvalid;
}

}  // namespace perfhat::handler
