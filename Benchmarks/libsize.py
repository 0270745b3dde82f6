#!/usr/bin/env python3
"""What libiapverify.so carries: its size, its sections, and the defined symbols' bytes grouped by
the Swift module that owns them (from the mangled names of the unstripped build that
build/lib/libiapverify.so.1 was stripped from).

usage: libsize.py STRIPPED_SO UNSTRIPPED_SO
"""
import collections
import os
import re
import subprocess
import sys

stripped, unstripped = sys.argv[1], sys.argv[2]
real = os.path.realpath(stripped)
print(f"\n{stripped} -> {os.path.basename(real)}: {os.path.getsize(real):,} bytes "
      f"({os.path.getsize(real) / 1048576:.1f} MiB, stripped; unstripped build {os.path.getsize(unstripped) / 1048576:.1f} MiB)")

# Sections of the shipped file.
out = subprocess.run(["readelf", "-S", "-W", real], capture_output=True, text=True, check=True).stdout
sections = []
for line in out.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
    if m:
        sections.append((int(m.group(2), 16), m.group(1)))
sections.sort(reverse=True)
print("  biggest sections: " + ", ".join(f"{name} {size / 1024:.0f} KiB" for size, name in sections[:7]))

ld = subprocess.run(["readelf", "-d", real], capture_output=True, text=True, check=True).stdout
needed = re.findall(r"Shared library: \[([^\]]+)\]", ld)
print("  links dynamically: " + ", ".join(needed))

MODULE_NAMES = {
    "FoundationEssentials": "FoundationEssentials",
    "_FoundationCollections": "FoundationEssentials (_FoundationCollections)",
    "_FoundationCShims": "FoundationEssentials (_FoundationCShims)",
    "SwiftASN1": "swift-asn1 (SwiftASN1)",
    "IAPVerify": "IAPVerify",
    "_RegexParser": "Swift regex (_RegexParser)",
    "_StringProcessing": "Swift regex (_StringProcessing)",
}


def owner(sym):
    s = sym.lstrip("_") if sym.startswith("_$s") else sym
    if s.startswith("$s"):
        body = s[2:]
        m = re.match(r"(\d+)", body)
        if m:
            n = int(m.group(1))
            name = body[len(m.group(1)):len(m.group(1)) + n]
            return MODULE_NAMES.get(name, name)
        # Standard-library substitutions ($ss..., $sSS, $sSa, ...): an extension or a specialization
        # emitted for another module names that module right after.
        for name, label in MODULE_NAMES.items():
            if f"{len(name)}{name}" in body[:40]:
                return label
        return "Swift stdlib"
    if sym.startswith("_ZN5swift") or sym.startswith("swift_") or sym.startswith("_swift_") or "swift" in sym[:12]:
        return "Swift runtime (C++)"
    if sym.startswith(("symbolic", "associated conformance", "l__swift5", "_swift5")) or sym.startswith("$"):
        return "Swift metadata records"
    if sym.lstrip("_").startswith(("CF", "_CF", "_foundation", "foundation")):
        return "FoundationEssentials (_FoundationCShims)"
    if "dispatch" in sym[:12]:
        return "libdispatch"
    if sym.startswith("_Z"):
        return "other C++"
    return "other C"


out = subprocess.run(["nm", "-S", "--size-sort", "--defined-only", unstripped], capture_output=True, text=True,
                     check=True).stdout
groups = collections.Counter()
counts = collections.Counter()
total = 0
for line in out.splitlines():
    parts = line.split(None, 3)
    if len(parts) < 4:
        continue
    size = int(parts[1], 16)
    label = owner(parts[3])
    groups[label] += size
    counts[label] += 1
    total += size
print(f"  defined symbols: {total / 1048576:.1f} MiB in {sum(counts.values()):,} symbols, by owner "
      "(nm --size-sort -S of the unstripped build):")
for label, size in groups.most_common(14):
    print(f"    {label:48s} {size / 1024:9.0f} KiB {100 * size / total:5.1f}%  ({counts[label]:,} symbols)")
foundation = sum(v for k, v in groups.items() if k.startswith("FoundationEssentials"))
print(f"  FoundationEssentials in all: {foundation / 1024:.0f} KiB of symbols ({100 * foundation / total:.0f}%)")
