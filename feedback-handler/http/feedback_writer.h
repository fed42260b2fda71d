// Streaming JSON writer for BatchGetResponse (DESIGN §4 contract, common/feedback.h).
//
// `serialize()` in common/feedback.cc builds an nlohmann DOM first (a map node per field, a heap
// string per key), which cost more than the store read itself for 10,000 keys. This writes the
// same document directly into one string: the same fields, the same optional-field rules, keys in
// the same (alphabetical) order. Numbers use the shortest round-trip form, so parsing either
// output gives the same values; the feedback_writer test checks that equivalence.
#pragma once

#include <string>
#include <vector>

#include "common/feedback.h"
#include "feedback-handler/util/parallel.h"

namespace perfhat::handler {

// `threads`: for a large response (≥ 2048 items), how many threads write it in chunks (0: one
// per core, at most 4; 1: the calling thread only). The document is the same either way.
std::string writeBatchGetResponse(const BatchGetResponse& response, int threads = 0);
// The same document in consecutive pieces (the head, the chunks of items, the tail), for a
// server to send one after the other instead of joining megabytes into one string first.
std::vector<std::string> writeBatchGetResponsePieces(const BatchGetResponse& response,
                                                     int threads = 0);
// The same, on the threads of `team` (a server's team for the whole request, see ChunkTeam),
// consuming `response`: each chunk's items are freed by the thread that wrote them.
std::vector<std::string> writeBatchGetResponsePieces(BatchGetResponse&& response, ChunkTeam& team);
std::string writeFeedbackItem(const FeedbackItem& item);

}  // namespace perfhat::handler
