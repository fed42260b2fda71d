// Compiled without instrumentation and linked into instr_autobench_auto (and the XRay build of
// bench/autobench.sh): see autobench_plain_copy.h.
#include "autobench_plain_copy.h"

#define AUTOBENCH_KV kv_plain
#include "autobench_kv.inc"

namespace plain_copy {

struct Db {
  kv_plain::Db db;
};
Db* make_db() { return new Db; }
void put(Db* db, const std::string& key, const std::string& value) { db->db.put(key, value); }
bool get(const Db* db, const std::string& key) { return db->db.get(key); }
uint64_t scan(const Db* db, const std::string& from, int n) { return db->db.scan(from, n); }
uint32_t checksum(const std::vector<char>& block) { return kv_plain::checksum(block); }

}  // namespace plain_copy
