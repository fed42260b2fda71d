#include "samples/agile/story_service.h"

#include "samples/agile/instrumentation.h"
#include "samples/agile/repository.h"
#include "samples/agile/user_directory.h"

namespace agile {

std::optional<StoryDetails> StoryService::storyDetails(int story_id) const {
  PERFHAT_FUNCTION();
  auto story = repository_.story(story_id);
  if (!story) return std::nullopt;
  StoryDetails details{story->id(), story->name(), story->storyPoints(), toString(story->state()),
                       story->iterationId()};
  // One directory round trip per task: the chatty remote call of this sample.
  for (const Task& task : story->tasks()) {
    details.tasks.push_back(TaskRow{task.id(), task.name(), toString(task.state()),
                                    directory_.displayName(task.ownerId()),
                                    task.originalEstimate()});
  }
  return details;
}

MoveResult StoryService::moveStory(int story_id, int iteration_id, const std::string& today) const {
  PERFHAT_FUNCTION();
  auto story = repository_.story(story_id);
  if (!story) return MoveResult::kNoSuchStory;
  auto target = repository_.iteration(iteration_id);
  if (!target) return MoveResult::kNoSuchIteration;
  story->setIteration(target->id);
  // A story pulled into a running iteration is started; a deferred one comes back to life.
  const bool running = target->start_date <= today && !target->isPastDeadline(today);
  if (story->state() == StoryState::kDeferred || story->state() == StoryState::kNotStarted) {
    story->setState(running ? StoryState::kStarted : StoryState::kNotStarted);
  }
  repository_.updateStory(*story);
  return MoveResult::kMoved;
}

std::optional<double> StoryService::storyEffort(int story_id) const {
  PERFHAT_FUNCTION();
  auto story = repository_.story(story_id);
  if (!story) return std::nullopt;
  double hours = 0;
  for (const Task& task : story->tasks()) hours += task.effortSpent();
  return hours;
}

}  // namespace agile
