#include "feedback-handler/http/auth.h"

#include <cctype>
#include <cstdint>

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

std::string_view bearerToken(std::string_view h) {
  auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!h.empty() && space(h.front())) h.remove_prefix(1);
  while (!h.empty() && space(h.back())) h.remove_suffix(1);
  constexpr std::string_view kScheme = "bearer";
  if (h.size() <= kScheme.size() || !space(h[kScheme.size()])) return {};
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(h[i])) != kScheme[i]) return {};
  }
  h.remove_prefix(kScheme.size());
  while (!h.empty() && space(h.front())) h.remove_prefix(1);
  return h;
}

AuthResult TokenAuth::check(std::string_view header, Access access, std::string* client) const {
  if (!enabled()) return AuthResult::kOk;
  const std::string_view token = bearerToken(header);
  if (token.empty()) return AuthResult::kMissing;
  // Every token is compared (no early exit), so timing does not tell which one matched.
  size_t rw = SIZE_MAX, ro = SIZE_MAX;
  for (size_t i = 0; i < rw_.size(); ++i) {
    if (constantTimeEquals(token, rw_[i]) && rw == SIZE_MAX) rw = i;
  }
  for (size_t i = 0; i < ro_.size(); ++i) {
    if (constantTimeEquals(token, ro_[i]) && ro == SIZE_MAX) ro = i;
  }
  if (rw != SIZE_MAX) {
    if (client) *client = "rw#" + std::to_string(rw);
    return AuthResult::kOk;
  }
  if (ro == SIZE_MAX) return AuthResult::kInvalid;
  if (access != Access::kRead) return AuthResult::kForbidden;
  if (client) *client = "ro#" + std::to_string(ro);
  return AuthResult::kOk;
}

}  // namespace perfhat::handler
