// A call-heavy real program for the full-trace corpus of bench/plan (issue 23): nlohmann::json
// parsing and printing a generated document, built with -finstrument-functions. Its own hooks
// (no libperfhat) write every function entry as (site, address) to a binary file; site = the
// repetition (36 repetitions: the paper's 36 users, each with its own mix of documents).
// json_corpus_to_tsv.py turns the file into SITE<TAB>FUNCTION lines with the binary's symbols.
//   json_corpus_app OUT.bin [sites=36] [items=60]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace {
FILE* g_out = nullptr;
uint32_t g_site = 0;
bool g_on = false;
}  // namespace

extern "C" {
[[gnu::no_instrument_function]] void __cyg_profile_func_enter(void* fn, void*) {
  if (!g_on) return;
  struct {
    uint32_t site;
    uint64_t fn;
  } __attribute__((packed)) rec{g_site, reinterpret_cast<uint64_t>(fn)};
  std::fwrite(&rec, sizeof(rec), 1, g_out);
}
[[gnu::no_instrument_function]] void __cyg_profile_func_exit(void*, void*) {}
}

namespace {
std::string document(int items, int variety) {
  nlohmann::json doc = nlohmann::json::array();
  for (int i = 0; i < items; ++i) {
    nlohmann::json item = {{"id", i}, {"name", "item-" + std::to_string(i)}};
    // Sites differ in what their documents hold, so functions are not spread evenly.
    if (variety % 2 == 0) item["price"] = i * 1.25;
    if (variety % 3 == 0) item["tags"] = {"a", "b", std::to_string(i % 7)};
    if (variety % 5 == 0) item["nested"] = {{"x", i % 3 == 0}, {"y", nullptr}};
    if (variety % 7 == 0) item["big"] = static_cast<uint64_t>(i) << 40;
    doc.push_back(item);
  }
  return doc.dump(variety % 4 == 0 ? 2 : -1);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int sites = argc > 2 ? std::atoi(argv[2]) : 36;
  const int items = argc > 3 ? std::atoi(argv[3]) : 60;
  g_out = std::fopen(argv[1], "wb");
  if (!g_out) return 1;
  // The address of main, so the converter can undo the load offset (PIE).
  const uint64_t main_addr = reinterpret_cast<uint64_t>(&main);
  std::fwrite(&main_addr, sizeof(main_addr), 1, g_out);
  size_t sink = 0;
  for (int s = 0; s < sites; ++s) {
    const std::string text = document(items * (1 + s % 5), s + 1);
    g_site = static_cast<uint32_t>(s);
    g_on = true;
    const nlohmann::json parsed = nlohmann::json::parse(text);
    sink += parsed.dump().size();
    g_on = false;
  }
  std::fclose(g_out);
  std::printf("%zu\n", sink);
  return 0;
}
