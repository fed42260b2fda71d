#include "samples/agile/planning_service.h"

#include "samples/agile/backlog_service.h"
#include "samples/agile/instrumentation.h"
#include "samples/agile/repository.h"

namespace agile {

std::optional<std::set<int>> PlanningService::candidateStoryIds(int iteration_id) const {
  PERFHAT_FUNCTION();
  auto iteration = repository_.iteration(iteration_id);
  if (!iteration) return std::nullopt;
  std::set<int> ids;
  for (const Story& story : repository_.storiesInBacklog(iteration->backlog_id)) {
    if (story.iterationId() == 0) ids.insert(story.id());
  }
  return ids;
}

}  // namespace agile
