// Write-behind's durable record of acknowledged ingest requests (see group_commit.h): an
// append-only file beside the SQLite store ("<store>-intake").
//
// A request is acknowledged once its body is in this file and fdatasync'ed. A checkpoint writes
// the aggregates of everything appended so far together with meta "intake_upto" (the last id it
// covers) in one store transaction, then empties the file. After a crash, recover() returns the
// records with an id above the store's "intake_upto": exactly the acknowledged requests whose
// aggregates were never committed (a crash between the commit and the emptying leaves records
// the id filter skips, so nothing is counted twice).
//
// Why a plain file rather than a table: a body is written once and read only after a crash.
// Inserting it into SQLite cost a B-tree insert, WAL frames, the WAL-to-database copy and a
// DELETE per request — about a tenth of the ingest CPU — for data that is dropped a second later.
//
// Record (format 2): magic "PHr2", u32 body length, i64 id, i32 format, u32 CRC-32 of the body,
// u32 CRC-32 of the 24 header bytes before it, then the body (host byte order: the file never
// leaves the machine). Each record stands on its own: a damaged body is skipped alone (its header
// gives the next record's offset); a damaged header is skipped by resynchronising on the next
// header that checks. Skipped damage is logged and counted (damage()); every undamaged record is
// still replayed, once. Format-1 records (u32 payload length, u32 CRC of the payload, payload =
// i64 id, i32 format, body), written by older handlers, are still read. A torn tail — an append
// that never completed, so was never acknowledged — is cut off.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace perfhat::handler {

struct IntakeBody {
  int format = 0;  // the ingest layer's tag (for the replay); opaque here
  std::string_view bytes;
};

struct IntakeRecord {
  int64_t id = 0;
  int format = 0;
  std::string body;
};

class IntakeLog {
 public:
  // The log of the SQLite store at `store_path`.
  static std::string pathFor(const std::string& store_path) { return store_path + "-intake"; }

  // Opens or creates the file and locks it for this process. Throws StoreError (with the path
  // and the system's reason), also when another process holds the log.
  explicit IntakeLog(std::string path);
  ~IntakeLog();
  IntakeLog(const IntakeLog&) = delete;
  IntakeLog& operator=(const IntakeLog&) = delete;

  // Records with an id above `after`, oldest first, skipping (logging and counting) damaged ones;
  // cuts off a torn tail. Ids of later appends
  // continue above both `after` and every record in the file. Call once, before appending.
  std::vector<IntakeRecord> recover(int64_t after);

  // Appends the bodies and syncs them to disk; returns the id of the last. On failure (e.g. disk
  // full) throws StoreError and the file is cut back to what it held before.
  int64_t append(const std::vector<IntakeBody>& bodies);

  // Everything appended is in the store's aggregates: empties the file.
  void clear();

  // The complete records with an id above `after` in the log at `path`, read without opening
  // it for writing (for inspection: the handler may hold it). Missing file: none.
  static std::vector<IntakeRecord> peek(const std::string& path, int64_t after);

  // Damage recover() skipped: records whose body did not check, stretches of bytes where no
  // header checked, records out of id order (each counts one), and their bytes.
  struct Damage {
    uint64_t records = 0;
    uint64_t bytes = 0;
  };
  Damage damage() const { return damage_; }

  int64_t lastId() const { return last_id_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t last_id_ = 0;
  int64_t size_ = 0;  // bytes of complete records
  Damage damage_;
};

}  // namespace perfhat::handler
