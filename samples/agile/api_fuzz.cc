// Fuzz target for the outside input the samples parse: request bodies and query strings of the
// service's write endpoints, and the service answers the workload generator navigates by.
// The first byte picks the target; the rest is the input.
#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <regex>
#include <string>

#include "samples/agile/api.h"
#include "samples/agile/database.h"
#include "samples/agile/seed.h"
#include "samples/agile/user_directory.h"
#include "samples/workload/workload.h"

namespace {

struct World {
  World()
      : db({":memory:", std::chrono::microseconds(0), 1}),
        repository(db),
        directory({""}),
        api(repository, directory) {
    agile::createSchema(db);
    agile::SeedConfig small;
    small.products = 1;
    small.projects_per_product = 1;
    small.stories_per_project = 5;
    agile::seedDataset(db, small);
  }
  agile::Database db;
  agile::Repository repository;
  agile::UserDirectoryClient directory;
  agile::Api api;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  httplib::Request request;
  httplib::Response response;
  switch (data[0] % 3) {
    case 0: {  // POST /tasks/{id}/hours with an arbitrary body
      request.path = "/tasks/3/hours";
      std::regex_match(request.path, request.matches, std::regex(R"(/tasks/(\d+)/hours)"));
      request.body = input;
      world.api.logHours(request, response);
      break;
    }
    case 1: {  // POST /stories/{id}/move?iteration=<arbitrary>
      request.path = "/stories/2/move";
      std::regex_match(request.path, request.matches, std::regex(R"(/stories/(\d+)/move)"));
      request.params.emplace("iteration", input);
      world.api.moveStory(request, response);
      break;
    }
    default: {  // a service answer driving the next step of every navigation pattern
      agile::workload::Catalog catalog;
      catalog.backlogs = {1};
      catalog.root_backlogs = {1};
      catalog.iterations = {1};
      catalog.stories = {1};
      std::mt19937 random(1);
      for (auto kind :
           {agile::workload::Session::Kind::kPlanner, agile::workload::Session::Kind::kDeveloper,
            agile::workload::Session::Kind::kManager}) {
        agile::workload::Session session(kind, catalog, random);
        for (int i = 0; i < 8 && session.next(input); ++i) {
        }
      }
    }
  }
  return 0;
}
