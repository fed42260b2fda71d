// ParseThread: libclang's parses on a thread of their own (parse_thread.h), one task at a time,
// the caller waiting for each.
#include "server/server/parse_thread.h"

#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace perfhat::server {
namespace {

TEST(ParseThread, RunsEachTaskOnOneOtherThreadAndReturnsWhenItIsDone) {
  ParseThread parse;
  EXPECT_EQ(parse.runs(), 0u);
  std::thread::id first, second;
  int value = 0;
  parse.run([&] {
    first = std::this_thread::get_id();
    value = 1;
  });
  EXPECT_EQ(value, 1) << "run() returned before its task had finished";
  parse.run([&] {
    second = std::this_thread::get_id();
    value = 2;
  });
  EXPECT_EQ(value, 2);
  EXPECT_NE(first, std::this_thread::get_id());
  EXPECT_EQ(first, second) << "the parses keep one thread (and its malloc arena)";
  EXPECT_EQ(parse.runs(), 2u);
}

TEST(ParseThread, AnExceptionOfTheTaskReachesTheCallerAndTheThreadGoesOn) {
  ParseThread parse;
  EXPECT_THROW(parse.run([] { throw std::runtime_error("libclang failed"); }), std::runtime_error);
  bool ran = false;
  parse.run([&] { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_EQ(parse.runs(), 2u);
}

// A stack that cannot be reserved (here larger than the address space; in the field a 512 MiB
// stack under `ulimit -v`): the tasks run on the calling thread and still return their results,
// and the reason is given once.
TEST(ParseThread, WhenTheThreadCannotBeCreatedTheTasksRunOnTheCaller) {
  ParseThread parse(size_t{1} << 60);
  std::thread::id ran_on;
  int value = 0;
  EXPECT_EQ(parse.run([&] {
    ran_on = std::this_thread::get_id();
    value = 1;
  }),
            0.0)
      << "the caller's CPU time is its own";
  EXPECT_EQ(value, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  const std::string note = parse.takeFallbackNote();
  EXPECT_NE(note.find("cannot start a thread"), std::string::npos) << note;
  EXPECT_EQ(parse.takeFallbackNote(), "") << "the reason is given once";

  parse.run([&] { value = 2; });
  EXPECT_EQ(value, 2);
  EXPECT_EQ(parse.takeFallbackNote(), "");
  EXPECT_THROW(parse.run([] { throw std::runtime_error("libclang failed"); }), std::runtime_error);
  EXPECT_EQ(parse.runs(), 0u) << "nothing ran on a parse thread";
}

}  // namespace
}  // namespace perfhat::server
