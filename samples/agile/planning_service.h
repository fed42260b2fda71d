// Planning: which stories can still be pulled into an iteration.
#pragma once

#include <optional>
#include <set>

namespace agile {

class Repository;
class BacklogService;

class PlanningService {
 public:
  PlanningService(const Repository& repository, const BacklogService& backlogs)
      : repository_(repository), backlogs_(backlogs) {}

  // Ids of the stories of the iteration's backlog that are not planned into any iteration yet.
  std::optional<std::set<int>> candidateStoryIds(int iteration_id) const;

 private:
  const Repository& repository_;
  [[maybe_unused]] const BacklogService& backlogs_;  // task T2's change reads it
};

}  // namespace agile
