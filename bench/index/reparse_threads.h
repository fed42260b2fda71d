// index_bench threads DB FILE N: libclang's reparse of the same edits on three translation units
// of FILE kept by three threads of this process — the main thread, a thread with the server's
// large analysis stack, and a thread with the default stack — in turn, each in its own thread's
// CPU time. Tells whether the thread an edit is analysed on changes libclang's cost.
#pragma once

#include <string>

namespace perfhat::bench {
int runReparseThreads(const std::string& db, const std::string& file, int n);
}  // namespace perfhat::bench
