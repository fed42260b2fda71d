// The Tigris selection a program's process hands to the next one (XRay mode with a filter,
// Config::selection_dir). A short process (a test program, a command-line tool run again and
// again) ends inside its first counting window: every process would count every call of every
// function and never run selected, which on googletest's samples cost more than the recording
// itself. So a process that counted writes down what its windows concluded: the functions the
// last cycle selected and the last window's length. The next process of the same program under
// the same configuration counts a window itself with probability `duty`, and otherwise patches
// only the carried functions (the next window then opens as after a close at start-up): over many
// short processes, the share of time spent counting is the duty, as in one long process, and only
// the processes that count write (xray_window.cc).
//
// The file is outside input (another user's, a truncated write, a different program's): it is
// read whole up to a size bound, every number and name is checked, and anything wrong is ignored
// (the process then counts a window, as with no file). A name is trusted as the ids are: the
// file is the user's own, in a directory only the user can write. Written to a temporary file
// renamed over the old one, so a reader sees a whole file; of processes of one program counting at
// once, the last to write wins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfhat::detail {

// What a carried selection is valid for: the program (its function ids), the configuration
// that selected (filter, scope, variant), and XRay's count of functions in it.
struct SelectionKey {
  std::string program;     // program_identity()
  uint64_t config = 0;     // selection_config_hash()
  uint64_t functions = 0;  // __xray_max_function_id()
};

struct CarriedSelection {
  uint64_t window_ns = 0;           // the last counting window's length
  std::vector<uint32_t> functions;  // XRay ids of the selected functions, ascending, unique
  // Their mangled symbols, in the same order ("" where unknown): the next process names them
  // without reading the program's symbol table, which cost a carried googletest sample 0.35-0.54
  // ms at start-up. Empty (every name unknown) when the names would pass the file's size bound.
  std::vector<std::string> names;
  // The hooks' calibrated costs (hook_stack.h, in ticks) of the last process that measured them,
  // and the host they were measured on (host_identity()); empty when none did.
  std::string host;
  std::vector<uint64_t> costs;
};

// A carried name is at most this long (longer ones are written as unknown).
inline constexpr size_t kMaxCarriedName = 4096;

// At most this many calibrated costs are read.
inline constexpr size_t kMaxCarriedCosts = 64;

// Files larger than this are not read (a selection of every function of a program with a
// million functions is about 7 MB).
inline constexpr size_t kMaxSelectionBytes = size_t{16} << 20;

std::string encode_selection(const SelectionKey& key, const CarriedSelection& s);
// The selection in `text` if it is well formed and for `key`; otherwise nullopt and, when `why`
// is given, the reason in words.
std::optional<CarriedSelection> decode_selection(std::string_view text, const SelectionKey& key,
                                                 std::string* why = nullptr);

// The running program's GNU build id in hex, or else its file's device, inode, size and
// modification time; "" when neither can be had.
std::string program_identity();
// This boot of this host (its name and the kernel's boot id, hashed): where tick counts compare.
std::string host_identity();
// A hash of what decides the selection besides the program.
uint64_t selection_config_hash(std::string_view filter, std::string_view scope,
                               std::string_view variant_manifest, int64_t variant, int64_t replica);
// DIR/<program>-<config>.sel
std::string selection_path(const std::string& dir, const SelectionKey& key);
// The file's text, or nullopt if it is missing, unreadable or over kMaxSelectionBytes.
std::optional<std::string> read_selection_file(const std::string& path);
// Writes `text` to a temporary file in the same directory (created, mode 0700, if missing) and
// renames it over `path`. Never throws; false on any failure.
bool write_selection_file(const std::string& path, const std::string& text) noexcept;

}  // namespace perfhat::detail
