#include "samples/agile/backlog_service.h"

#include <set>

#include "samples/agile/instrumentation.h"
#include "samples/agile/repository.h"
#include "samples/agile/user_directory.h"

namespace agile {

std::optional<BacklogView> BacklogService::backlogContents(int backlog_id) const {
  PERFHAT_FUNCTION();
  auto backlog = repository_.backlog(backlog_id);
  if (!backlog) return std::nullopt;
  BacklogView view{*backlog, {}, repository_.iterationsOf(backlog_id)};
  // N+1: one query for the stories, then one more per story for its tasks.
  for (const Story& story : repository_.storiesInBacklog(backlog_id)) {
    view.stories.push_back(StoryRow{story.id(), story.name(), story.storyPoints(),
                                    toString(story.state()), int(story.tasks().size()),
                                    storyPoints(story)});
  }
  return view;
}

std::optional<BacklogTree> BacklogService::backlogTree(int backlog_id) const {
  PERFHAT_FUNCTION();
  auto root = repository_.backlog(backlog_id);
  if (!root) return std::nullopt;
  BacklogTree tree{*root};
  std::set<int> owner_ids;
  std::set<int> backlog_ids;
  for (const Story& story : descendantStories(backlog_id)) {
    ++tree.story_count;
    tree.total_points += story.storyPoints();
    backlog_ids.insert(story.backlogId());
    for (const Task& task : story.tasks()) owner_ids.insert(task.ownerId());
  }
  tree.backlog_count = int(backlog_ids.size());
  for (int owner : owner_ids) tree.owners.push_back("user" + std::to_string(owner));
  return tree;
}

std::vector<Story> BacklogService::descendantStories(int backlog_id) const {
  PERFHAT_FUNCTION();
  std::vector<Story> stories;
  if (auto root = repository_.backlog(backlog_id)) collectStories(*root, stories);
  PERFHAT_RESULT_SIZE(stories.size());
  return stories;
}

void BacklogService::collectStories(const Backlog& backlog, std::vector<Story>& out) const {
  PERFHAT_FUNCTION();
  if (backlog.isArchived()) return;
  for (Story& story : repository_.storiesInBacklog(backlog.id)) {
    // Planning needs the tasks and who owns the first one: load both now.
    const auto& tasks = story.tasks();
    if (!tasks.empty()) directory_.lookup(tasks.front().ownerId());
    out.push_back(std::move(story));
  }
  for (const Backlog& child : repository_.childBacklogs(backlog.id)) collectStories(child, out);
}

double BacklogService::storyPoints(const Story& story) const {
  PERFHAT_FUNCTION();
  const auto& tasks = story.tasks();
  if (tasks.empty() || story.state() == StoryState::kDone) return 0;
  int open = 0;
  for (const Task& task : tasks) {
    if (task.state() != TaskState::kDone) ++open;
  }
  return story.storyPoints() * double(open) / double(tasks.size());
}

}  // namespace agile
