#!/usr/bin/env bash
# Every change of the accuracy study: the four maintenance tasks and the seven changes of
# bench/prediction/changes/, each with the function it changes and that function's key.
#
#   bench/prediction/all_changes.sh BUILD_DIR
#
# Environment as for accuracy.sh (ACCURACY_LOAD_S, ACCURACY_RATE, ACCURACY_KEEP, ACCURACY_REUSE,
# ACCURACY_LSP). About 12 workload runs of ACCURACY_LOAD_S seconds plus an incremental build of
# the sample service per change.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:?usage: all_changes.sh BUILD_DIR}
A=samples/agile
C=bench/prediction/changes
exec bash bench/prediction/accuracy.sh "$BUILD" \
  samples/tasks/T1/reference.patch $A/story_service.cc moveStory \
  "agile::StoryService::moveStory(int, int, const std::string &) const" \
  samples/tasks/T2/reference.patch $A/planning_service.cc candidateStoryIds \
  "agile::PlanningService::candidateStoryIds(int) const" \
  samples/tasks/T3/reference.patch $A/iteration_service.cc iterationSummary \
  "agile::IterationService::iterationSummary(int, const std::string &) const" \
  samples/tasks/T4/reference.patch $A/iteration_service.cc iterationMetrics \
  "agile::IterationService::iterationMetrics(int) const" \
  $C/c1_effort_per_task_on_story_page.patch $A/story_service.cc storyDetails \
  "agile::StoryService::storyDetails(int) const" \
  $C/c2_task_count_per_story_in_summary.patch $A/iteration_service.cc iterationSummary \
  "agile::IterationService::iterationSummary(int, const std::string &) const" \
  $C/c3_nested_loop_over_candidate_tasks.patch $A/planning_service.cc candidateStoryIds \
  "agile::PlanningService::candidateStoryIds(int) const" \
  $C/c4_story_lookup_on_task_page.patch $A/task_service.cc taskDetails \
  "agile::TaskService::taskDetails(int) const" \
  $C/c5_iterations_lookup_moved_into_story_loop.patch $A/backlog_service.cc backlogContents \
  "agile::BacklogService::backlogContents(int) const" \
  $C/c6_new_helper_without_data_in_summary_loop.patch $A/iteration_service.cc iterationSummary \
  "agile::IterationService::iterationSummary(int, const std::string &) const" \
  $C/c7_effort_in_timesheet_loop.patch $A/task_service.cc timesheet \
  "agile::TaskService::timesheet(int) const"
