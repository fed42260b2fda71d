// The user directory: a separate service that knows people's names and teams (in Agilefant's
// deployments, the company LDAP behind an HTTP façade). The sample talks to it over loopback
// HTTP, one request per user, which makes any per-task name lookup a chatty remote call.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "samples/agile/model.h"

namespace httplib {
class Client;
}

namespace agile {

struct UserDirectoryConfig {
  std::string url;  // e.g. http://127.0.0.1:4400; empty = no directory (names fall back to ids)
  std::chrono::milliseconds timeout{2000};
};

class UserDirectoryClient {
 public:
  explicit UserDirectoryClient(UserDirectoryConfig config);
  ~UserDirectoryClient();

  // One remote call. nullopt when the user is unknown or the directory is unreachable.
  std::optional<User> lookup(int user_id) const;
  // The user's display name, or "user #ID" when the directory cannot say.
  std::string displayName(int user_id) const;

 private:
  UserDirectoryConfig config_;
};

// The directory's own data: deterministic, so names match the seeded database's user ids.
User directoryEntry(int user_id);

}  // namespace agile
