// A deterministic call-heavy program for dynamic_gprof_test: built with -pg and
// -finstrument-functions at once, so one run writes gprof's gmon.out and sends libperfhat's
// spans (or aggregate rows) to a handler. 4,000-odd calls among the gp:: functions.
#include <cstdio>

namespace perfhat {
void shutdown();
}

namespace gp {

volatile int g_sink = 0;

[[gnu::noinline]] int leaf(int x) {
  g_sink = x;
  return x * 3 + 1;
}

[[gnu::noinline]] int mid(int x) {
  int s = 0;
  for (int i = 0; i <= x % 4; ++i) s += leaf(x + i);
  return s;
}

[[gnu::noinline]] int other(int x) {
  int s = leaf(x);
  if (x % 3 == 0) s += mid(x);
  return s;
}

[[gnu::noinline]] int top(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += (i % 2) ? mid(i) : other(i);
  return s;
}

}  // namespace gp

int main() {
  std::printf("%d\n", gp::top(1000));
  perfhat::shutdown();  // flushes what is still queued before gmon.out is written
  return 0;
}
