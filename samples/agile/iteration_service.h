// Iterations (sprints): the metrics shown on an iteration's dashboard and its summary card.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "samples/agile/model.h"

namespace agile {

class Repository;

struct IterationMetrics {
  Iteration iteration;
  int story_count = 0;
  int done_stories = 0;
  int task_count = 0;
  int done_tasks = 0;
  double original_estimate = 0;  // hours, summed over every task
};

// The transfer object the iteration card is rendered from.
struct IterationSummary {
  Iteration iteration;
  std::vector<std::string> story_names;
  bool past_deadline = false;
};

class IterationService {
 public:
  explicit IterationService(const Repository& repository) : repository_(repository) {}

  std::optional<IterationMetrics> iterationMetrics(int iteration_id) const;
  std::optional<IterationSummary> iterationSummary(int iteration_id,
                                                   const std::string& today) const;

 private:
  const Repository& repository_;
};

}  // namespace agile
