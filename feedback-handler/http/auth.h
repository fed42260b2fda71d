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
  // `authorization` is the raw Authorization header ("Bearer T").
  AuthResult check(std::string_view authorization, Access access) const;

 private:
  std::vector<std::string> rw_, ro_;
};

bool constantTimeEquals(std::string_view a, std::string_view b);

}  // namespace perfhat::handler
