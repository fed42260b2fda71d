// index_bench split DB ROOT FILE N: N edits of FILE analysed by ClangAnalyzer in this process,
// each beside libclang's bare reparse of the same text (preamble reused) on the same thread,
// in CPU time, with the analysis split by phase. INDEX_BENCH_KEEP_SNAPSHOT=1 keeps each edit's
// snapshot until the next one has replaced it, as the server does.
#pragma once

#include <string>

namespace perfhat::bench {
// with_index: the workspace index of DB is built (or read back from the server's store) first,
// so that the analysis adds other files' bodies as the server does with its index on.
int runSplit(const std::string& db, const std::string& root, const std::string& file, int n,
             bool with_index = false);
}  // namespace perfhat::bench
