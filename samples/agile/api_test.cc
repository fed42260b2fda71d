#include "samples/agile/api.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "samples/agile/test_support.h"

namespace agile {
namespace {

using nlohmann::json;

json getJson(httplib::Client& client, const std::string& path, int expected_status = 200) {
  auto response = client.Get(path);
  EXPECT_TRUE(response) << path;
  if (!response) return {};
  EXPECT_EQ(response->status, expected_status) << path << ": " << response->body;
  return json::parse(response->body, nullptr, false);
}

TEST(SamplesApi, ServesTheDomainOverHttp) {
  testing::ServiceFixture service;
  httplib::Client client(service.url());

  const json products = getJson(client, "/products");
  ASSERT_TRUE(products.is_array());
  ASSERT_EQ(products.size(), 3u);
  EXPECT_EQ(products[0]["name"], "Agilefant");
  EXPECT_EQ(products[0]["backlogs"].size(), 4u);

  const json backlog = getJson(client, "/backlogs/2");
  EXPECT_EQ(backlog["backlog"]["id"], 2);
  EXPECT_FALSE(backlog["stories"].empty());
  EXPECT_EQ(backlog["iterations"].size(), 4u);

  const json metrics = getJson(client, "/iterations/1");
  const int expected_tasks = int(service.db()
                                     .query("SELECT COUNT(*) FROM tasks JOIN stories ON "
                                            "tasks.story_id = stories.id WHERE iteration_id = 1")
                                     .at(0)
                                     .integer(0));
  EXPECT_EQ(metrics["tasks"], expected_tasks);
  EXPECT_GT(metrics["stories"].get<int>(), 0);

  const json story = getJson(client, "/stories/7");
  ASSERT_TRUE(story["tasks"].is_array());
  // Without a user directory, owners fall back to their ids.
  EXPECT_EQ(story["tasks"][0]["owner"].get<std::string>().rfind("user #", 0), 0u);

  const json tree = getJson(client, "/backlogs/1/tree");
  EXPECT_GT(tree["stories"].get<int>(), backlog["stories"].size());
  EXPECT_GT(getJson(client, "/users/3/timesheet")["lines"].size(), 0u);
  EXPECT_TRUE(getJson(client, "/iterations/2/candidates")["candidates"].is_array());
}

TEST(SamplesApi, WritesAreVisibleToLaterReads) {
  testing::ServiceFixture service;
  httplib::Client client(service.url());
  const double before = getJson(client, "/tasks/10")["spent"].get<double>();
  auto posted = client.Post("/tasks/10/hours", R"({"user": 4, "hours": 1.5})", "application/json");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 201);
  EXPECT_DOUBLE_EQ(getJson(client, "/tasks/10")["spent"].get<double>(), before + 1.5);

  auto moved = client.Post("/stories/3/move?iteration=5", "", "text/plain");
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->status, 200);
  EXPECT_EQ(getJson(client, "/stories/3")["iteration"], 5);
}

TEST(SamplesApi, BadInputGetsClearErrors) {
  testing::ServiceFixture service;
  httplib::Client client(service.url());
  EXPECT_EQ(getJson(client, "/backlogs/9999", 404)["error"]["message"], "no such backlog");
  getJson(client, "/stories/99999", 404);
  getJson(client, "/iterations/99999999999999999999", 404);
  for (const char* body : {"", "not json", "{\"user\": 1}", "{\"user\": 1, \"hours\": -2}",
                           "{\"user\": \"x\", \"hours\": 1}", "{\"user\": 1, \"hours\": 99}"}) {
    auto response = client.Post("/tasks/10/hours", body, "application/json");
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 400) << body;
  }
  auto move = client.Post("/stories/3/move?iteration=abc", "", "text/plain");
  ASSERT_TRUE(move);
  EXPECT_EQ(move->status, 400);
  // The service still answers after all of that.
  getJson(client, "/products");
}

TEST(SamplesApi, OwnerNamesComeFromTheUserDirectory) {
  // A real directory process stand-in: an httplib server answering like agile-userdir.
  httplib::Server directory;
  directory.Get(
      R"(/users/(\d+))", [](const httplib::Request& request, httplib::Response& response) {
        const User user = directoryEntry(std::stoi(request.matches[1].str()));
        response.set_content(json{{"id", user.id}, {"name", user.name}}.dump(), "application/json");
      });
  const int port = directory.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { directory.listen_after_bind(); });
  for (int i = 0; i < 500 && !directory.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  {
    testing::ServiceFixture service(std::chrono::microseconds(0),
                                    "http://127.0.0.1:" + std::to_string(port));
    httplib::Client client(service.url());
    const json story = getJson(client, "/stories/7");
    const int owner = int(service.db()
                              .query("SELECT owner_id FROM tasks WHERE story_id = 7 ORDER BY id")
                              .at(0)
                              .integer(0));
    EXPECT_EQ(story["tasks"][0]["owner"], directoryEntry(owner).name);
  }
  directory.stop();
  thread.join();
}

}  // namespace
}  // namespace agile
