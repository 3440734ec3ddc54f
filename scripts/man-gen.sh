#!/bin/bash
# Renders a man page of man/ from its source (PAGE.in) into one man reads:
#
#   @VERSION@     becomes the project's version (VERSION), as the
#                 programs print it for -V
#   @COUNTERS@    a line of its own: becomes the list of counters, one
#                 .TP entry each, from the stats attribute-set of
#                 uapi/netagg.yaml: the name as netagg stats names it
#                 (drop-short: drop_short), in bold, and what the spec
#                 says it counts. Listed from the spec, as the CLI's names
#                 and meanings are (scripts/netlink-gen.sh), the page
#                 cannot miss a counter the module reports.
#
#   scripts/man-gen.sh IN OUT    IN and OUT relative to the repository's
#                                top, or absolute
#
# tests/host_man.sh renders every page so and checks it against the CLI,
# the library and the spec.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
	echo "usage: scripts/man-gen.sh IN OUT" >&2
	exit 2
fi
in=$1 out=$2
if [ ! -f "$in" ]; then
	echo "scripts/man-gen.sh: no page source \"$in\"" >&2
	exit 1
fi
PY=/usr/bin/python3
SPEC=uapi/netagg.yaml

# Written whole or not at all: a page half rendered would be read as done.
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
"$PY" - "$in" "$tmp" "$SPEC" "$(cat VERSION)" <<'EOF'
import sys
import yaml

src, dst, spec_path, version = sys.argv[1:]


def roff(text):
    """One line of running text: backslashes escaped, and a leading dot
    or quote made text, not a request."""
    text = " ".join(text.split()).replace("\\", "\\e")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def counters():
    spec = yaml.safe_load(open(spec_path))
    stats = next(s for s in spec["attribute-sets"] if s["name"] == "stats")
    lines = []
    for attr in stats["attributes"]:
        if attr["type"] == "unused":
            continue
        lines += [".TP", ".B " + attr["name"].replace("-", "_"),
                  roff(attr.get("doc", ""))]
    return lines


out = []
for lineno, line in enumerate(open(src).read().splitlines(), 1):
    if line == "@COUNTERS@":
        out += counters()
        continue
    # Elsewhere it would go out as it is, in the page's text.
    if "@COUNTERS@" in line:
        sys.exit(f"{src}:{lineno}: @COUNTERS@ must be alone on its line")
    out.append(line.replace("@VERSION@", version))
with open(dst, "w") as f:
    f.write("\n".join(out) + "\n")
EOF
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
