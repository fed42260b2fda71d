#include "symbolize.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "thread_annotations.h"

namespace perfhat::symbolize {
namespace {

struct Entry {
  uint64_t value, size;
  const char* name;  // in the file's mapping, which stays for the process
};

// An object's function symbols. Sorted at its third lookup: sorting a program's whole symbol
// table (0.4 M instructions for googletest's samples) costs about eight linear scans, so a
// process that symbolizes one or two functions saves most of it, and one that symbolizes many
// (the stack sampler) pays two scans more.
constexpr int kLinearLookups = 2;
struct ObjectSymbols {
  bool pie = false;
  bool sorted = false;
  int lookups = 0;
  std::vector<Entry> funcs;  // sorted by value once `sorted`
  // The end of the string table the names point into: a name is checked to end inside it when
  // it is found, not every name at load (that read the whole string table, 0.3 MB for
  // googletest's samples, at the first function's symbolization of every process).
  const char* names_end = nullptr;
};

bool contains(const Entry& e, uint64_t off) {
  return off >= e.value && off < e.value + std::max<uint64_t>(e.size, 1);
}

// The entry whose function contains `off` (the highest-valued one if several do), or nullptr.
const Entry* find_function(ObjectSymbols& obj, uint64_t off) {
  if (!obj.sorted && ++obj.lookups > kLinearLookups) {
    std::sort(obj.funcs.begin(), obj.funcs.end(),
              [](const Entry& a, const Entry& b) { return a.value < b.value; });
    obj.sorted = true;
  }
  if (!obj.sorted) {
    const Entry* best = nullptr;
    for (const Entry& e : obj.funcs)
      if (contains(e, off) && (best == nullptr || e.value > best->value)) best = &e;
    return best;
  }
  auto ub = std::upper_bound(obj.funcs.begin(), obj.funcs.end(), off,
                             [](uint64_t v, const Entry& e) { return v < e.value; });
  // Look back over a few preceding entries (aliases, zero-size labels) for one that contains
  // the address.
  for (int k = 0; k < 8 && ub != obj.funcs.begin(); ++k) {
    --ub;
    if (contains(*ub, off)) return &*ub;
  }
  return nullptr;
}

// Reads STT_FUNC symbols from .symtab (or .dynsym) of an ELF64 file. The file stays mapped
// (read-only, pages shared with the page cache): names are not copied, thousands of small
// allocations at the first call of each process otherwise.
ObjectSymbols load(const char* path) {
  ObjectSymbols out;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    ::close(fd);
    return out;
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return out;
  const auto* base = static_cast<const uint8_t*>(map);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  auto in_bounds = [&](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      in_bounds(eh->e_shoff, uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    out.pie = eh->e_type == ET_DYN;
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
    for (int want : {SHT_SYMTAB, SHT_DYNSYM}) {
      for (int i = 0; i < eh->e_shnum; ++i) {
        if (static_cast<int>(sh[i].sh_type) != want || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr& strtab = sh[sh[i].sh_link];
        if (!in_bounds(sh[i].sh_offset, sh[i].sh_size) ||
            !in_bounds(strtab.sh_offset, strtab.sh_size)) {
          continue;
        }
        const auto* syms = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        const char* strs = reinterpret_cast<const char*>(base + strtab.sh_offset);
        for (size_t k = 0; k < n; ++k) {
          if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC || syms[k].st_value == 0) continue;
          if (syms[k].st_name >= strtab.sh_size) continue;
          out.funcs.push_back({syms[k].st_value, syms[k].st_size, strs + syms[k].st_name});
        }
        if (!out.funcs.empty()) {  // one table's names: one end to check them against
          out.names_end = strs + strtab.sh_size;
          break;
        }
      }
      if (!out.funcs.empty()) break;
    }
  }
  if (out.funcs.empty()) ::munmap(map, size);
  return out;
}

detail::Mutex g_mu;
std::map<std::string, ObjectSymbols>& cache() PERFHAT_REQUIRES(g_mu) {
  static auto* c = new std::map<std::string, ObjectSymbols>();
  return *c;
}
// dladdr's object name -> the file to read for it, decided once per object: realpath and
// readlink are several system calls, and every instrumented function's first call symbolizes.
std::map<std::string, std::string>& files() PERFHAT_REQUIRES(g_mu) {
  static auto* f = new std::map<std::string, std::string>();
  return *f;
}

// The main program reports an argv[0]-like (possibly relative) name; /proc/self/exe is the
// reliable file for it.
std::string file_for(const std::string& name) {
  char real[4096], self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) self[n] = '\0';
  if (name.empty() || ::realpath(name.c_str(), real) == nullptr ||
      (n > 0 && std::strcmp(real, self) == 0)) {
    return "/proc/self/exe";
  }
  return name;
}

}  // namespace

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return mangled;
  std::string out(d);
  std::free(d);
  return out;
}

Symbol resolve(const void* addr) {
  Symbol s;
  Dl_info info{};
  if (addr == nullptr || ::dladdr(addr, &info) == 0) return s;
  if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
    s.mangled = info.dli_sname;
    s.start = info.dli_saddr;
  } else if (info.dli_fname != nullptr) {
    detail::Lock l(g_mu);
    auto file = files().find(info.dli_fname);
    if (file == files().end())
      file = files().emplace(info.dli_fname, file_for(info.dli_fname)).first;
    const std::string& path = file->second;
    auto it = cache().find(path);
    if (it == cache().end()) it = cache().emplace(path, load(path.c_str())).first;
    ObjectSymbols& obj = it->second;
    uint64_t a = reinterpret_cast<uintptr_t>(addr);
    uint64_t off = obj.pie ? a - reinterpret_cast<uintptr_t>(info.dli_fbase) : a;
    const Entry* e = find_function(obj, off);
    // A name not terminated inside its string table (a damaged file) is no name.
    if (e != nullptr && strnlen(e->name, static_cast<size_t>(obj.names_end - e->name)) ==
                            static_cast<size_t>(obj.names_end - e->name)) {
      e = nullptr;
    }
    if (e != nullptr) {
      s.mangled = e->name;
      // NOLINTNEXTLINE(performance-no-int-to-ptr): a symbol's value is its address
      s.start = reinterpret_cast<const void*>(
          obj.pie ? e->value + reinterpret_cast<uintptr_t>(info.dli_fbase) : e->value);
    }
  }
  if (!s.mangled.empty()) s.demangled = demangle(s.mangled);
  return s;
}

}  // namespace perfhat::symbolize
