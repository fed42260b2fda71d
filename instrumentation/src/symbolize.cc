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
  uint64_t value = 0, size = 0;
  const char* name = nullptr;  // in the file's mapping, which stays for the process
};

// An object's function symbols: its symbol table, scanned in place in the file's mapping for the
// first lookups, then copied and sorted at the third. Sorting a program's whole symbol table
// (0.4 M instructions for googletest's samples) costs about eight linear scans, and the copy
// writes 0.1 MB (26 pages, each a page fault): a process that symbolizes one or two functions
// pays neither, one that symbolizes many (the stack sampler) pays two scans more.
constexpr int kLinearLookups = 2;
struct ObjectSymbols {
  bool pie = false;
  bool sorted = false;
  int lookups = 0;
  const Elf64_Sym* syms = nullptr;  // the table in the mapping
  size_t n_syms = 0;
  const char* names = nullptr;  // its string table
  size_t names_size = 0;
  std::vector<Entry> funcs;  // the function symbols, sorted by value once `sorted`
};

// Symbol k of the table as an Entry, or an Entry without a name when it is not a function.
Entry function_at(const ObjectSymbols& obj, size_t k) {
  const Elf64_Sym& sym = obj.syms[k];
  if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_name >= obj.names_size)
    return {};
  return {sym.st_value, sym.st_size, obj.names + sym.st_name};
}

bool contains(const Entry& e, uint64_t off) {
  return off >= e.value && off < e.value + std::max<uint64_t>(e.size, 1);
}

void sort_functions(ObjectSymbols& obj) {
  size_t n = 0;
  for (size_t k = 0; k < obj.n_syms; ++k) n += function_at(obj, k).name != nullptr;
  obj.funcs.reserve(n);
  for (size_t k = 0; k < obj.n_syms; ++k) {
    const Entry e = function_at(obj, k);
    if (e.name != nullptr) obj.funcs.push_back(e);
  }
  std::sort(obj.funcs.begin(), obj.funcs.end(),
            [](const Entry& a, const Entry& b) { return a.value < b.value; });
  obj.sorted = true;
}

// The function containing `off` (the highest-valued one if several do), or an Entry without a
// name.
Entry find_function(ObjectSymbols& obj, uint64_t off) {
  if (!obj.sorted && ++obj.lookups > kLinearLookups) sort_functions(obj);
  if (!obj.sorted) {
    Entry best;
    for (size_t k = 0; k < obj.n_syms; ++k) {
      const Entry e = function_at(obj, k);
      if (e.name != nullptr && contains(e, off) && (best.name == nullptr || e.value > best.value))
        best = e;
    }
    return best;
  }
  auto ub = std::upper_bound(obj.funcs.begin(), obj.funcs.end(), off,
                             [](uint64_t v, const Entry& e) { return v < e.value; });
  // Look back over a few preceding entries (aliases, zero-size labels) for one that contains
  // the address.
  for (int k = 0; k < 8 && ub != obj.funcs.begin(); ++k) {
    --ub;
    if (contains(*ub, off)) return *ub;
  }
  return {};
}

// Finds .symtab (or .dynsym, when .symtab has no function) of an ELF64 file. The file stays
// mapped (read-only, pages shared with the page cache): names are not copied, thousands of small
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
      for (int i = 0; i < eh->e_shnum && out.syms == nullptr; ++i) {
        if (static_cast<int>(sh[i].sh_type) != want || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr& strtab = sh[sh[i].sh_link];
        if (!in_bounds(sh[i].sh_offset, sh[i].sh_size) ||
            !in_bounds(strtab.sh_offset, strtab.sh_size)) {
          continue;
        }
        out.syms = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
        out.n_syms = sh[i].sh_size / sizeof(Elf64_Sym);
        out.names = reinterpret_cast<const char*>(base + strtab.sh_offset);
        out.names_size = strtab.sh_size;
        // A table without a function is no table (a stripped file's .symtab).
        size_t k = 0;
        while (k < out.n_syms && function_at(out, k).name == nullptr) ++k;
        if (k == out.n_syms) out.syms = nullptr;
      }
      if (out.syms != nullptr) break;
    }
  }
  if (out.syms == nullptr) {
    ::munmap(map, size);
    out.n_syms = 0;
  }
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

namespace {

// The symbol table of the object `info` names (loaded at its first use).
ObjectSymbols& object_of(const Dl_info& info) PERFHAT_REQUIRES(g_mu) {
  auto file = files().find(info.dli_fname);
  if (file == files().end()) file = files().emplace(info.dli_fname, file_for(info.dli_fname)).first;
  const std::string& path = file->second;
  auto it = cache().find(path);
  if (it == cache().end()) it = cache().emplace(path, load(path.c_str())).first;
  return it->second;
}

uint64_t offset_in(const ObjectSymbols& obj, const Dl_info& info, const void* addr) {
  const uint64_t a = reinterpret_cast<uintptr_t>(addr);
  return obj.pie ? a - reinterpret_cast<uintptr_t>(info.dli_fbase) : a;
}

// `e` of `obj` as a Symbol (no name when `e` has none, or its name is not terminated inside the
// string table: a damaged file).
Symbol symbol_of(const ObjectSymbols& obj, const Dl_info& info, const Entry& e) {
  Symbol s;
  const auto room =
      e.name != nullptr ? static_cast<size_t>(obj.names + obj.names_size - e.name) : size_t{0};
  if (e.name != nullptr && strnlen(e.name, room) < room) {
    s.mangled = e.name;
    // NOLINTNEXTLINE(performance-no-int-to-ptr): a symbol's value is its address
    s.start = reinterpret_cast<const void*>(
        obj.pie ? e.value + reinterpret_cast<uintptr_t>(info.dli_fbase) : e.value);
  }
  return s;
}

// The functions containing each of `offs` (ascending) in one pass over an unsorted table: what
// find_function gives each, for one linear lookup instead of one per address.
std::vector<Entry> find_functions(const ObjectSymbols& obj, const std::vector<uint64_t>& offs) {
  std::vector<Entry> best(offs.size());
  for (size_t k = 0; k < obj.n_syms; ++k) {
    const Entry e = function_at(obj, k);
    if (e.name == nullptr) continue;
    for (auto it = std::lower_bound(offs.begin(), offs.end(), e.value);
         it != offs.end() && contains(e, *it); ++it) {
      Entry& b = best[static_cast<size_t>(it - offs.begin())];
      if (b.name == nullptr || e.value > b.value) b = e;
    }
  }
  return best;
}

}  // namespace

Symbol resolve(const void* addr) {
  Symbol s;
  Dl_info info{};
  if (addr == nullptr || ::dladdr(addr, &info) == 0) return s;
  if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
    s.mangled = info.dli_sname;
    s.start = info.dli_saddr;
  } else if (info.dli_fname != nullptr) {
    detail::Lock l(g_mu);
    ObjectSymbols& obj = object_of(info);
    s = symbol_of(obj, info, find_function(obj, offset_in(obj, info, addr)));
  }
  if (!s.mangled.empty()) s.demangled = demangle(s.mangled);
  return s;
}

size_t tables_read() {
  detail::Lock l(g_mu);
  return cache().size();
}

std::vector<Symbol> resolve_all(const std::vector<const void*>& addrs) {
  std::vector<Symbol> out(addrs.size());
  // Per object's table, the addresses resolved from it: (offset, index into addrs).
  std::map<ObjectSymbols*, std::vector<std::pair<uint64_t, size_t>>> by_object;
  std::vector<Dl_info> infos(addrs.size());
  detail::Lock l(g_mu);
  for (size_t i = 0; i < addrs.size(); ++i) {
    Dl_info& info = infos[i];
    if (addrs[i] == nullptr || ::dladdr(addrs[i], &info) == 0) continue;
    if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
      out[i].mangled = info.dli_sname;
      out[i].start = info.dli_saddr;
    } else if (info.dli_fname != nullptr) {
      ObjectSymbols& obj = object_of(info);
      by_object[&obj].emplace_back(offset_in(obj, info, addrs[i]), i);
    }
  }
  for (auto& [obj, wanted] : by_object) {
    std::sort(wanted.begin(), wanted.end());
    std::vector<Entry> found;
    if (obj->sorted || wanted.size() == 1) {
      for (const auto& w : wanted) found.push_back(find_function(*obj, w.first));
    } else {
      ++obj->lookups;  // one linear lookup, however many addresses
      std::vector<uint64_t> offs;
      for (const auto& w : wanted) offs.push_back(w.first);
      found = find_functions(*obj, offs);
    }
    for (size_t k = 0; k < wanted.size(); ++k)
      out[wanted[k].second] = symbol_of(*obj, infos[wanted[k].second], found[k]);
  }
  for (Symbol& s : out)
    if (!s.mangled.empty()) s.demangled = demangle(s.mangled);
  return out;
}

}  // namespace perfhat::symbolize
