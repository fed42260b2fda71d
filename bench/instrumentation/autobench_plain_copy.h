// An uninstrumented copy of autobench's key-value store (autobench_kv.inc compiled without
// compiler hooks or XRay sleds), behind an opaque interface: the instrumented program's
// translation unit must not see (and instrument) the copy's inline functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plain_copy {

struct Db;
Db* make_db();
void put(Db* db, const std::string& key, const std::string& value);
bool get(const Db* db, const std::string& key);
uint64_t scan(const Db* db, const std::string& from, int n);
uint32_t checksum(const std::vector<char>& block);

}  // namespace plain_copy
