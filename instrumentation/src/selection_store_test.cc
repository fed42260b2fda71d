// The carried selection's file (selection_store.h): what one process writes the next reads back,
// and nothing another program, configuration or build wrote, or a damaged file, is believed.
#include "selection_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace perfhat::detail {
namespace {

SelectionKey key() { return {"0fd90aa285071b0bb97cf6d686d23812d7a9e6c5", 0x734b7e49a8f35ce4, 333}; }

CarriedSelection selection() {
  return {5720577,
          {2, 52, 75, 76, 78, 234, 333},
          {"_ZN4xwin3hotEi", "", "_ZN7testing4Test3RunEv", "main", "_Z1fv", "", "_ZNK1a1bEv"},
          "b0c1d2e3f4a5b6c7",
          {0, 5120, 77, 1u << 20}};
}

TEST(SelectionStore, WhatIsWrittenIsReadBack) {
  const std::string text = encode_selection(key(), selection());
  std::string why;
  auto s = decode_selection(text, key(), &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->window_ns, 5720577u);
  EXPECT_EQ(s->functions, selection().functions);
  EXPECT_EQ(s->host, "b0c1d2e3f4a5b6c7");
  EXPECT_EQ(s->costs, selection().costs);
  EXPECT_EQ(s->names, selection().names);  // "" where a name was unknown
  // An empty selection (the cycle selected nothing), with no calibration, is a selection too.
  auto none = decode_selection(encode_selection(key(), {10, {}, {}, "", {}}), key(), &why);
  ASSERT_TRUE(none) << why;
  EXPECT_TRUE(none->functions.empty());
  EXPECT_TRUE(none->host.empty());
  EXPECT_TRUE(none->costs.empty());
}

// A name that is not a symbol (a space, a control character, too long) is written as unknown, and
// names that would take the file past the size bound are all left out: the ids still carry.
TEST(SelectionStore, NamesThatCannotBeCarriedAreWrittenAsUnknown) {
  CarriedSelection bad = selection();
  bad.names[0] = "a b";
  bad.names[2] = "x\n";
  bad.names[3] = std::string(kMaxCarriedName + 1, 'x');
  bad.names[4] = std::string(kMaxCarriedName, 'y');
  bad.names.pop_back();  // fewer names than functions
  std::string why;
  auto s = decode_selection(encode_selection(key(), bad), key(), &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->names, (std::vector<std::string>{"", "", "", "", bad.names[4], "", ""}));
  SelectionKey many = key();
  many.functions = 8000;
  CarriedSelection big{1, {}, {}, "", {}};
  for (uint32_t fid = 1; fid <= many.functions; ++fid) {
    big.functions.push_back(fid);
    big.names.push_back(std::string(kMaxCarriedName, 'z'));  // 32 MB of names
  }
  const std::string text = encode_selection(many, big);
  EXPECT_LE(text.size(), kMaxSelectionBytes);
  s = decode_selection(text, many, &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->functions, big.functions);
  EXPECT_EQ(s->names, std::vector<std::string>(big.functions.size()));
}

TEST(SelectionStore, AnotherProgramConfigurationOrBuildIsNotBelieved) {
  const std::string text = encode_selection(key(), selection());
  SelectionKey other = key();
  other.program = "file-803-1a2b-5000-17";
  EXPECT_FALSE(decode_selection(text, other));
  other = key();
  other.config ^= 1;
  EXPECT_FALSE(decode_selection(text, other));
  other = key();
  other.functions = 334;  // the same build id cannot have another count; a guard all the same
  EXPECT_FALSE(decode_selection(text, other));
}

TEST(SelectionStore, ADamagedFileIsNotBelieved) {
  const std::string good = encode_selection(key(), selection());
  // Every truncation, and a few edits, fail with a reason.
  for (size_t n = 0; n < good.size(); ++n) {
    std::string why;
    EXPECT_FALSE(decode_selection(good.substr(0, n), key(), &why)) << n;
    EXPECT_FALSE(why.empty()) << n;
  }
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return decode_selection(t, key());
  };
  EXPECT_FALSE(edited("selected 7", "selected 8"));    // fewer ids than counted
  EXPECT_FALSE(edited("selected 7", "selected 6"));    // more
  EXPECT_FALSE(edited("selected 7", "selected 999"));  // more than the program has
  EXPECT_FALSE(edited(" 333\n", " 334\n"));            // an id past the program's
  EXPECT_FALSE(edited("2 52", "52 2"));                // out of order
  EXPECT_FALSE(edited("75 76", "75 75"));              // repeated
  EXPECT_FALSE(edited("2 52", "0 52"));                // no function 0
  EXPECT_FALSE(edited("window_ns 5720577", "window_ns 0"));
  EXPECT_FALSE(edited("window_ns 5720577", "window_ns -1"));
  EXPECT_FALSE(edited("window_ns 5720577", "window_ns 99999999999999999999999"));
  EXPECT_FALSE(edited("end\n", "end\nmore\n"));
  EXPECT_FALSE(edited("costs 4", "costs 5"));                          // fewer costs than counted
  EXPECT_FALSE(edited("costs 4", "costs 65"));                         // more than are ever read
  EXPECT_FALSE(edited("5120 77", "5120 x7"));                          // not a number
  EXPECT_FALSE(edited("host b0c1d2e3f4a5b6c7", "host a/b"));           // not a host id
  EXPECT_FALSE(edited("host b0c1d2e3f4a5b6c7", "host"));               // none
  EXPECT_FALSE(edited("perfhat-selection 2", "perfhat-selection 1"));  // before names
  EXPECT_FALSE(edited("\nnames\n", "\nnamez\n"));
  EXPECT_FALSE(edited("_ZN4xwin3hotEi", "_ZN4xwin 3hotEi"));  // not a symbol
  EXPECT_FALSE(edited("_ZN4xwin3hotEi\n", ""));               // a name missing
  EXPECT_FALSE(edited("main\n", "main\n\n"));                 // an empty one
  EXPECT_FALSE(edited("main", std::string(kMaxCarriedName + 1, 'm')));
  EXPECT_FALSE(decode_selection(std::string(kMaxSelectionBytes + 1, 'x'), key()));
}

TEST(SelectionStore, AFileIsReplacedWholeAndItsDirectoryMade) {
  char tmpl[] = "/tmp/perfhat_selection_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = std::string(tmpl) + "/a/b";
  const std::string path = selection_path(dir, key());
  EXPECT_EQ(path, dir + "/0fd90aa285071b0bb97cf6d686d23812d7a9e6c5-734b7e49a8f35ce4.sel");
  EXPECT_FALSE(read_selection_file(path));
  ASSERT_TRUE(write_selection_file(path, "first\n"));
  ASSERT_TRUE(write_selection_file(path, encode_selection(key(), selection())));
  auto text = read_selection_file(path);
  ASSERT_TRUE(text);
  EXPECT_TRUE(decode_selection(*text, key()));
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // A link planted where the temporary file goes is not followed: it is replaced, its target kept.
  const std::string target = std::string(tmpl) + "/target";
  { std::ofstream(target) << "keep"; }
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  ASSERT_EQ(symlink(target.c_str(), tmp.c_str()), 0);
  ASSERT_TRUE(write_selection_file(path, encode_selection(key(), selection())));
  std::ifstream kept(target);
  std::string word;
  kept >> word;
  EXPECT_EQ(word, "keep");
  // Nowhere to write: false, no exception.
  EXPECT_FALSE(write_selection_file("/proc/perfhat-no-such/x.sel", "x"));
  EXPECT_EQ(std::system(("rm -rf " + std::string(tmpl)).c_str()), 0);
}

TEST(SelectionStore, TheProgramHasAnIdentityAndTheConfigurationAHash) {
  const std::string id = program_identity();
  EXPECT_FALSE(id.empty());
  EXPECT_EQ(id, program_identity());
  EXPECT_EQ(id.find('/'), std::string::npos);  // a file name
  const uint64_t h = selection_config_hash("most expensive", "", "", -1, -1);
  EXPECT_EQ(h, selection_config_hash("most expensive", "", "", -1, -1));
  EXPECT_NE(h, selection_config_hash("most frequent", "", "", -1, -1));
  EXPECT_NE(h, selection_config_hash("most expensive", "ns::*", "", -1, -1));
  EXPECT_NE(h, selection_config_hash("most expensive", "", "", 1, -1));
  const std::string host = host_identity();
  EXPECT_EQ(host.size(), 16u);
  EXPECT_EQ(host, host_identity());
  EXPECT_NE(selection_config_hash("ab", "c", "", -1, -1),
            selection_config_hash("a", "bc", "", -1, -1));
}

}  // namespace
}  // namespace perfhat::detail
