// Bearer-token authorization for deployed handlers (DESIGN §5). Tokens are compared in constant
// time (no early exit on the first differing byte, every configured token checked), so response
// timing does not reveal how much of a guessed token was right.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace perfhat::handler {

enum class Access { kRead, kWrite };
enum class AuthResult { kOk, kMissing, kInvalid, kForbidden };

class TokenAuth {
 public:
  // No tokens at all = authentication disabled (local mode on loopback).
  TokenAuth(std::vector<std::string> read_write, std::vector<std::string> read_only);
  bool enabled() const { return !rw_.empty() || !ro_.empty(); }
  // `authorization` is the raw Authorization header ("Bearer T"; the scheme in any letter case,
  // spaces around the token ignored). On kOk, `client` (when given) names the matched token
  // ("rw#0", "ro#2"): the same client however the header is spelt, for per-client limits.
  AuthResult check(std::string_view authorization, Access access,
                   std::string* client = nullptr) const;

 private:
  std::vector<std::string> rw_, ro_;
};

bool constantTimeEquals(std::string_view a, std::string_view b);

// The token of an Authorization header with the Bearer scheme (RFC 7235 credentials: the scheme
// case-insensitive, then one or more spaces; surrounding whitespace trimmed); empty when the
// header is absent, of another scheme, or has no token.
std::string_view bearerToken(std::string_view authorization);

}  // namespace perfhat::handler
