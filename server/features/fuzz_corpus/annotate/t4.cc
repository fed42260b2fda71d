#include "agile/backlog.h"

int BacklogService::listStories(const Backlog& backlog) {
  int total = 0;
  for (const Story& s : backlog.stories()) {
    total += storyPoints(s);
    for (int pass = 0; pass < 3; ++pass) {
      total += s.getTasks().size();
    }
  }
  return total;
}
