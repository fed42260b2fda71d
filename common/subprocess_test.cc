#include "common/subprocess.h"

#include <gtest/gtest.h>

namespace perfhat {
namespace {

TEST(Subprocess, CollectsOutputAndExitCode) {
  SubprocessResult r = runSubprocess({"sh", "-c", "printf 'a\\nb'; echo oops >&2; exit 3"});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "a\nb");
  EXPECT_EQ(r.err, "oops\n");
  EXPECT_FALSE(r.ok());
}

TEST(Subprocess, RunsInTheGivenDirectory) {
  SubprocessResult r = runSubprocess({"pwd"}, "/tmp");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "/tmp\n");
}

TEST(Subprocess, MissingProgramIsAnError) {
  SubprocessResult r = runSubprocess({"perfhat-no-such-program-xyz"});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error, "");
}

TEST(Subprocess, OutputBeyondTheLimitStopsTheChild) {
  SubprocessLimits limits;
  limits.max_output_bytes = 1000;
  SubprocessResult r = runSubprocess({"yes"}, {}, limits);
  EXPECT_TRUE(r.truncated);
  EXPECT_LE(r.out.size(), 1000u);
  EXPECT_FALSE(r.ok());
}

TEST(Subprocess, SlowChildIsKilledAtTheDeadline) {
  SubprocessLimits limits;
  limits.timeout_ms = 200;
  SubprocessResult r = runSubprocess({"sleep", "30"}, {}, limits);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace perfhat
