#include "selection_store.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "common/fnv1a.h"
#include "json_text.h"

namespace perfhat::detail {
namespace {

constexpr std::string_view kMagic = "perfhat-selection 2";

// The main program's NT_GNU_BUILD_ID note (the first object dl_iterate_phdr reports).
int find_build_id(dl_phdr_info* info, size_t, void* out) {
  auto* id = static_cast<std::string*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the loader gives the segment as an address
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    size_t left = ph.p_memsz;
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const size_t name = (nh.n_namesz + 3) & ~size_t{3}, desc = (nh.n_descsz + 3) & ~size_t{3};
      const size_t size = sizeof nh + name + desc;
      if (size > left) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
          std::memcmp(p + sizeof nh, "GNU", 4) == 0 && nh.n_descsz > 0) {
        *id = hex(p + sizeof nh + name, nh.n_descsz);
        return 1;
      }
      p += size;
      left -= size;
    }
  }
  return 1;  // only the first object: the program
}

// "key value" on one line; the rest of `text` after it in `text`.
bool take_line(std::string_view& text, std::string_view& line) {
  const size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return false;
  line = text.substr(0, nl);
  text.remove_prefix(nl + 1);
  return true;
}

bool parse_u64(std::string_view s, uint64_t& v) {
  if (s.empty() || s.size() > 20) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Exactly `n` numbers separated by single spaces (an empty line for none).
bool parse_numbers(std::string_view line, uint64_t n, std::vector<uint64_t>& out) {
  out.clear();
  while (!line.empty()) {
    const size_t sp = line.find(' ');
    uint64_t v = 0;
    if (out.size() == n || !parse_u64(line.substr(0, sp), v)) return false;
    out.push_back(v);
    if (sp == std::string_view::npos) break;
    line.remove_prefix(sp + 1);
  }
  return out.size() == n;
}

bool field(std::string_view& text, std::string_view key, std::string_view& value) {
  std::string_view line;
  if (!take_line(text, line) || line.size() <= key.size() || line.substr(0, key.size()) != key ||
      line[key.size()] != ' ') {
    return false;
  }
  value = line.substr(key.size() + 1);
  return true;
}

bool number_field(std::string_view& text, std::string_view key, uint64_t& v) {
  std::string_view value;
  return field(text, key, value) && parse_u64(value, v);
}

// A mangled symbol as the file may carry it: printable ASCII without spaces, bounded.
bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxCarriedName) return false;
  for (char c : name)
    if (c <= ' ' || c > '~') return false;
  return true;
}

std::optional<CarriedSelection> fail(std::string* why, const char* reason) {
  if (why != nullptr) *why = reason;
  return std::nullopt;
}

}  // namespace

std::string encode_selection(const SelectionKey& key, const CarriedSelection& s) {
  char config[17];
  std::snprintf(config, sizeof config, "%016llx", static_cast<unsigned long long>(key.config));
  std::string out(kMagic);
  out += "\nprogram " + key.program + "\nconfig " + config;
  out += "\nfunctions " + std::to_string(key.functions);
  out += "\nwindow_ns " + std::to_string(s.window_ns);
  out += "\nhost " + (s.host.empty() ? std::string("-") : s.host);
  out += "\ncosts " + std::to_string(s.costs.size()) + "\n";
  for (size_t i = 0; i < s.costs.size(); ++i) {
    if (i != 0) out += ' ';
    out += std::to_string(s.costs[i]);
  }
  out += "\nselected " + std::to_string(s.functions.size()) + "\n";
  for (size_t i = 0; i < s.functions.size(); ++i) {
    if (i != 0) out += ' ';
    out += std::to_string(s.functions[i]);
  }
  // One line per selected function; "-" where the name is unknown, too long, or the names would
  // take the file past what a reader reads.
  out += "\nnames\n";
  std::vector<std::string_view> names(s.functions.size(), "-");
  size_t bytes = out.size() + 4;  // "end\n"
  for (size_t i = 0; i < names.size(); ++i) {
    if (i < s.names.size() && valid_name(s.names[i])) names[i] = s.names[i];
    bytes += names[i].size() + 1;
  }
  const bool with_names = bytes <= kMaxSelectionBytes;
  for (std::string_view name : names) {
    out += with_names ? name : "-";
    out += '\n';
  }
  out += "end\n";
  return out;
}

std::optional<CarriedSelection> decode_selection(std::string_view text, const SelectionKey& key,
                                                 std::string* why) {
  if (text.size() > kMaxSelectionBytes) return fail(why, "larger than the size bound");
  std::string_view line, value;
  if (!take_line(text, line) || line != kMagic) return fail(why, "not a selection file");
  if (!field(text, "program", value)) return fail(why, "no program line");
  if (value != key.program) return fail(why, "another program's selection");
  uint64_t config = 0, functions = 0, selected = 0;
  if (!field(text, "config", value) || value.size() != 16 ||
      std::from_chars(value.data(), value.data() + 16, config, 16).ptr != value.data() + 16) {
    return fail(why, "no configuration line");
  }
  if (config != key.config) return fail(why, "selected under another configuration");
  if (!number_field(text, "functions", functions)) return fail(why, "no functions line");
  if (functions != key.functions) return fail(why, "another build of the program");
  CarriedSelection s;
  if (!number_field(text, "window_ns", s.window_ns) || s.window_ns == 0) {
    return fail(why, "no window length");
  }
  if (!field(text, "host", value) || value.size() > 64 ||
      value.find_first_not_of("0123456789abcdef-") != std::string_view::npos) {
    return fail(why, "no host line");
  }
  if (value != "-") s.host = value;
  uint64_t costs = 0;
  if (!number_field(text, "costs", costs) || costs > kMaxCarriedCosts) {
    return fail(why, "no cost count, or too many");
  }
  if (!take_line(text, line)) return fail(why, "no list of costs");
  if (!parse_numbers(line, costs, s.costs)) return fail(why, "costs that do not parse");
  if (!number_field(text, "selected", selected) || selected > functions) {
    return fail(why, "no selected count, or more than the program's functions");
  }
  if (!take_line(text, line)) return fail(why, "no list of selected functions");
  s.functions.reserve(selected);
  while (!line.empty()) {
    const size_t sp = line.find(' ');
    uint64_t fid = 0;
    if (!parse_u64(line.substr(0, sp), fid) || fid == 0 || fid > functions ||
        (!s.functions.empty() && fid <= s.functions.back()) || s.functions.size() == selected) {
      return fail(why, "a selected function id out of range, repeated or out of order");
    }
    s.functions.push_back(static_cast<uint32_t>(fid));
    if (sp == std::string_view::npos) break;
    line.remove_prefix(sp + 1);
  }
  if (s.functions.size() != selected) return fail(why, "fewer selected functions than counted");
  if (!take_line(text, line) || line != "names") return fail(why, "no names line");
  s.names.reserve(selected);
  for (uint64_t i = 0; i < selected; ++i) {
    if (!take_line(text, line) || (line != "-" && !valid_name(line))) {
      return fail(why, "a name missing, empty, too long or not a symbol");
    }
    s.names.emplace_back(line == "-" ? std::string_view() : line);
  }
  if (!take_line(text, line) || line != "end" || !text.empty()) {
    return fail(why, "truncated, or text after its end");
  }
  return s;
}

std::string program_identity() {
  std::string id;
  dl_iterate_phdr(&find_build_id, &id);
  if (!id.empty()) return id;
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return "";
  char buf[96];
  std::snprintf(
      buf, sizeof buf, "file-%llx-%llx-%llx-%llx", static_cast<unsigned long long>(st.st_dev),
      static_cast<unsigned long long>(st.st_ino), static_cast<unsigned long long>(st.st_size),
      static_cast<unsigned long long>(st.st_mtim.tv_sec) * 1000000000ull +
          static_cast<unsigned long long>(st.st_mtim.tv_nsec));
  return buf;
}

std::string host_identity() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  char boot[64] = {};
  const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = ::read(fd, boot, sizeof boot - 1);
    boot[n > 0 ? n : 0] = '\0';
    ::close(fd);
  }
  if (host[0] == '\0' && boot[0] == '\0') return "";
  Fnv1a h;
  h.text(host);
  h.text(boot);
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h.h));
  return out;
}

uint64_t selection_config_hash(std::string_view filter, std::string_view scope,
                               std::string_view variant_manifest, int64_t variant,
                               int64_t replica) {
  Fnv1a h;
  h.text(filter);
  h.text(scope);
  h.text(variant_manifest);
  h.number(static_cast<uint64_t>(variant));
  h.number(static_cast<uint64_t>(replica));
  return h.h;
}

std::string selection_path(const std::string& dir, const SelectionKey& key) {
  char config[17];
  std::snprintf(config, sizeof config, "%016llx", static_cast<unsigned long long>(key.config));
  return dir + "/" + key.program + "-" + config + ".sel";
}

std::optional<std::string> read_selection_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) <= kMaxSelectionBytes) {
    std::string buf(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < buf.size()) {
      const ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got == buf.size()) text = std::move(buf);
  }
  ::close(fd);
  return text;
}

bool write_selection_file(const std::string& path, const std::string& text) noexcept {
  try {
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash != 0) {
      // Each missing component, as mkdir -p; an existing one is fine.
      const std::string dir = path.substr(0, slash);
      for (size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
        const std::string part = dir.substr(0, at);
        if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
        if (at == std::string::npos) break;
      }
    }
    // A name of this process's own, made new (never a file or link someone put there: the
    // directory may be shared); one left by a process that died with this pid is removed first.
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::open(tmp.c_str(), kFlags, 0600);
    if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0)
      fd = ::open(tmp.c_str(), kFlags, 0600);
    if (fd < 0) return false;
    size_t put = 0;
    while (put < text.size()) {
      const ssize_t n = ::write(fd, text.data() + put, text.size() - put);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      put += static_cast<size_t>(n);
    }
    const bool ok = ::close(fd) == 0 && put == text.size();
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
      ::unlink(tmp.c_str());
      return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace perfhat::detail
