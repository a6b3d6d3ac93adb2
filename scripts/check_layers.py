#!/usr/bin/python3
"""The layering the build enforces, checked on the sources: every `#include "dir/..."` of a file
in lib/, passes/ or tools/ names its own folder or a lower layer.

    check_layers.py [REPO]

Layers, lowest first (each is one CMake library, linked only to the ones below it):

    support -> ir -> exec -> passes -> loaders | emitters -> driver -> tools

loaders and emitters are siblings: neither includes the other. Exit 0 when every include keeps
to this; otherwise one line per offending include and exit 1.
"""
import os
import re
import sys

# folder (as written in includes) -> (source directory, rank)
LAYERS = {
    "support": ("lib/support", 0),
    "ir": ("lib/ir", 1),
    "exec": ("lib/exec", 2),
    "passes": ("passes", 3),
    "loaders": ("lib/loaders", 4),
    "emitters": ("lib/emitters", 4),
    "driver": ("lib/driver", 5),
    "tools": ("tools", 6),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bad = []
    files = 0
    for layer, (src, rank) in LAYERS.items():
        root = os.path.join(repo, src)
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                files += 1
                with open(path, encoding="utf-8") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) == layer:
                            continue
                        target = m.group(1)
                        if target not in LAYERS:
                            bad.append(f"{os.path.relpath(path, repo)}:{lineno}: includes '{target}/', "
                                       "which is no layer")
                        elif LAYERS[target][1] >= rank:
                            bad.append(f"{os.path.relpath(path, repo)}:{lineno}: {layer} includes "
                                       f"{target}/ (a layer at or above it)")
    for b in bad:
        print(b)
    if bad:
        print(f"check_layers: {len(bad)} include(s) run back up the layering "
              "(support -> ir -> exec -> passes -> loaders | emitters -> driver -> tools)")
        return 1
    if files == 0:
        print("check_layers: no sources found", file=sys.stderr)
        return 2
    print(f"check_layers: {files} files keep to the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main())
