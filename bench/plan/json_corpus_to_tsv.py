#!/usr/bin/env python3
"""json_corpus_app's binary trace -> SITE<TAB>FUNCTION lines (demangled names from `nm -C`).
With LEGEND, functions are written as short ids f<N> (nlohmann's names run to ~400 bytes, and
the simulation needs distinct keys only) and LEGEND lists f<N><TAB>name.
  json_corpus_to_tsv.py BINARY TRACE.bin OUT.tsv [LEGEND.tsv]"""
import struct, subprocess, sys

binary, trace, out = sys.argv[1:4]
legend = sys.argv[4] if len(sys.argv) > 4 else None
syms = {}
main_static = None
for line in subprocess.run(["nm", "-C", "--defined-only", binary], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    parts = line.split(" ", 2)
    if len(parts) == 3 and parts[1] in "tTwW":
        addr = int(parts[0], 16)
        syms[addr] = parts[2]
        if parts[2] == "main":
            main_static = addr
data = open(trace, "rb").read()
(main_run,) = struct.unpack_from("<Q", data, 0)
offset = main_run - main_static
names = {}
n = 0
with open(out, "w") as f:
    for off in range(8, len(data) - 11, 12):
        site, fn = struct.unpack_from("<IQ", data, off)
        name = names.get(fn)
        if name is None:
            full = syms.get(fn - offset, hex(fn - offset))
            name = names[fn] = f"f{len(names)}" if legend else full
            if legend:
                with open(legend, "a") as lf:
                    lf.write(f"{name}\t{full}\n")
        f.write(f"{site}\t{name}\n")
        n += 1
print(f"{n} records, {len(names)} functions")
