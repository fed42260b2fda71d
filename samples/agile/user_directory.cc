#include "samples/agile/user_directory.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "samples/agile/instrumentation.h"

namespace agile {
namespace {

const char* const kFirstNames[] = {"Ada",    "Linus",   "Grace",  "Ken",      "Barbara",
                                   "Dennis", "Frances", "Bjarne", "Margaret", "Niklaus"};
const char* const kLastNames[] = {"Lovelace", "Torvalds", "Hopper",     "Thompson", "Liskov",
                                  "Ritchie",  "Allen",    "Stroustrup", "Hamilton", "Wirth"};
const char* const kTeams[] = {"Core", "Web", "Mobile", "Platform"};

}  // namespace

User directoryEntry(int user_id) {
  const int i = user_id < 0 ? -user_id : user_id;
  return User{user_id, "user" + std::to_string(user_id),
              std::string(kFirstNames[i % 10]) + " " + kLastNames[(i / 10) % 10], kTeams[i % 4]};
}

UserDirectoryClient::UserDirectoryClient(UserDirectoryConfig config) : config_(std::move(config)) {}
UserDirectoryClient::~UserDirectoryClient() = default;

std::optional<User> UserDirectoryClient::lookup(int user_id) const {
  PERFHAT_FUNCTION();
  if (config_.url.empty()) return std::nullopt;
  // A fresh connection per call, as the naive directory client this sample models does.
  httplib::Client client(config_.url);
  const auto ms = config_.timeout.count();
  client.set_connection_timeout(ms / 1000, (ms % 1000) * 1000);
  client.set_read_timeout(ms / 1000, (ms % 1000) * 1000);
  auto response = client.Get("/users/" + std::to_string(user_id));
  if (!response || response->status != 200) return std::nullopt;
  const auto body = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return std::nullopt;
  return User{body.value("id", user_id), body.value("login", std::string()),
              body.value("name", std::string()), body.value("team", std::string())};
}

std::string UserDirectoryClient::displayName(int user_id) const {
  PERFHAT_FUNCTION();
  if (auto user = lookup(user_id); user && !user->name.empty()) return user->name;
  return "user #" + std::to_string(user_id);
}

}  // namespace agile
