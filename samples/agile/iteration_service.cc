#include "samples/agile/iteration_service.h"

#include "samples/agile/instrumentation.h"
#include "samples/agile/repository.h"

namespace agile {

std::optional<IterationMetrics> IterationService::iterationMetrics(int iteration_id) const {
  PERFHAT_FUNCTION();
  auto iteration = repository_.iteration(iteration_id);
  if (!iteration) return std::nullopt;
  IterationMetrics metrics{*iteration};
  for (const Story& story : repository_.storiesInIteration(iteration_id)) {
    ++metrics.story_count;
    if (story.state() == StoryState::kDone) ++metrics.done_stories;
    for (const Task& task : story.tasks()) {
      ++metrics.task_count;
      if (task.state() == TaskState::kDone) ++metrics.done_tasks;
      metrics.original_estimate += task.originalEstimate();
    }
  }
  return metrics;
}

std::optional<IterationSummary> IterationService::iterationSummary(int iteration_id,
                                                                   const std::string& today) const {
  PERFHAT_FUNCTION();
  auto iteration = repository_.iteration(iteration_id);
  if (!iteration) return std::nullopt;
  IterationSummary summary{*iteration};
  summary.past_deadline = iteration->isPastDeadline(today);
  for (const Story& story : repository_.storiesInIteration(iteration_id)) {
    summary.story_names.push_back(story.name());
  }
  return summary;
}

}  // namespace agile
