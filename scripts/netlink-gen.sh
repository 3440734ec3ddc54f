#!/bin/bash
# Renders what is declared once in uapi/netagg.yaml, the netagg family:
#
#   uapi/linux/netagg_nl.h   the uAPI: constants, enums, commands,
#                            attributes (ynl-gen-c.py --mode uapi)
#   kmod/netlink-gen.[ch]    the module's policies and split op table
#                            (ynl-gen-c.py --mode kernel)
#   cli/nl-policy.c    the CLI's reply policy: every attribute of the
#                            family's set, typed as the spec types it; and
#                            the counters' names and what each counts (the
#                            stats set's docs), as netagg stats shows them
#
# The generator is the kernel's own (tools/net/ynl of linux-source-6.12,
# unpacked by scripts/ksrc). The module's policies are rendered from the
# spec without its checks and without the enums its attributes name
# (which bound a value by the enum's last): the handlers check the values
# and say the bound in words ("unknown dtype (f32, i32, f16 or bf16)"),
# which the core's "integer out of range" would pre-empt. Nor
# are they rendered with the multicast group: a genetlink-legacy family
# gets no generated family struct, and the module's, in kmod/netlink.c,
# holds the group.
#
#   scripts/netlink-gen.sh           write the files
#   scripts/netlink-gen.sh --check   write nothing; exit 1, showing the
#                                    difference, if rendering again would
#                                    change any of them
#
# NETAGG_SPEC=FILE renders FILE instead of uapi/netagg.yaml (the tests
# check that a changed spec is caught).
set -euo pipefail
[ -z "${NETAGG_SPEC:-}" ] || NETAGG_SPEC=$(realpath "$NETAGG_SPEC")
cd "$(dirname "$0")/.."

check=false
case ${1:-} in
--check) check=true ;;
"") ;;
*) echo "usage: scripts/netlink-gen.sh [--check]" >&2; exit 2 ;;
esac

SPEC=${NETAGG_SPEC:-uapi/netagg.yaml}
PY=/usr/bin/python3
OUTPUTS=(uapi/linux/netagg_nl.h kmod/netlink-gen.c kmod/netlink-gen.h
	 cli/nl-policy.c)

ynl=$(scripts/ksrc ynl)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The generator wants the spec where the kernel keeps its own: it names it
# by its path from the tree's top (found by MAINTAINERS) and looks for the
# schema beside specs/. Lay out that much of a kernel tree, twice: the
# spec as it is, and the module's copy without checks and groups.
tree()
{
	mkdir -p "$tmp/$1/Documentation/netlink/specs"
	: >"$tmp/$1/MAINTAINERS"
	ln -s "$ynl/Documentation/netlink/genetlink-legacy.yaml" \
		"$tmp/$1/Documentation/netlink/"
}
tree full
tree kmod
cp "$SPEC" "$tmp/full/Documentation/netlink/specs/netagg.yaml"
"$PY" - "$SPEC" "$tmp/kmod/Documentation/netlink/specs/netagg.yaml" <<'EOF'
import sys
import yaml

spec = yaml.safe_load(open(sys.argv[1]))
for attr_set in spec["attribute-sets"]:
    for attr in attr_set["attributes"]:
        attr.pop("checks", None)
        attr.pop("enum", None)	# would bound the value by the enum's last
spec.pop("mcast-groups", None)
for op in spec["operations"]["list"]:
    op.pop("mcgrp", None)
with open(sys.argv[2], "w") as out:
    out.write(open(sys.argv[1]).readline())	# the SPDX line the generator wants
    yaml.safe_dump(spec, out, sort_keys=False)
EOF

gen()
{
	local spec=$tmp/$1/Documentation/netlink/specs/netagg.yaml out=$tmp/out/$2
	shift 2
	mkdir -p "$(dirname "$out")"
	(cd "$(dirname "$out")" &&
	 timeout 60 "$PY" "$ynl/tools/net/ynl/ynl-gen-c.py" --spec "$spec" \
		"$@" -o "$(basename "$out")")
	# Name the spec where this repository keeps it.
	sed -i 's|^/\*\tDocumentation/netlink/specs/netagg.yaml \*/$|/*\tuapi/netagg.yaml */|' "$out"
}
gen full uapi/linux/netagg_nl.h --mode uapi --header
gen kmod kmod/netlink-gen.c --mode kernel --source
gen kmod kmod/netlink-gen.h --mode kernel --header

# The CLI's reply policy: libnl's types for the spec's.
mkdir -p "$tmp/out/cli"
"$PY" - "$SPEC" "$tmp/out/cli/nl-policy.c" <<'EOF'
import sys
import yaml

TYPES = {"u8": "NLA_U8", "u16": "NLA_U16", "u32": "NLA_U32", "u64": "NLA_U64",
         "flag": "NLA_FLAG", "nest": "NLA_NESTED", "string": "NLA_STRING",
         "binary": "NLA_UNSPEC"}
spec = yaml.safe_load(open(sys.argv[1]))
attr_set = next(s for s in spec["attribute-sets"] if s["name"] == spec["name"])
prefix = attr_set["name-prefix"]
with open(sys.argv[2], "w") as out:
    out.write("// SPDX-License-Identifier: GPL-2.0\n"
              "/* Do not edit directly, auto-generated from: */\n"
              "/*\tuapi/netagg.yaml */\n"
              "/* by scripts/netlink-gen.sh */\n\n"
              "#include <netlink/attr.h>\n"
              "#include <linux/netagg.h>\n"
              "#include \"cli.h\"\n\n"
              "/* What the CLI reads of the replies: every attribute, typed. */\n"
              "struct nla_policy netagg_reply_policy[NETAGG_A_MAX + 1] = {\n")
    for attr in attr_set["attributes"]:
        if attr["type"] in ("unused", "pad"):
            continue
        name = (prefix + attr["name"]).upper().replace("-", "_")
        # A binary attribute of a set length (an IPv6 address) has it.
        minlen = attr.get("checks", {}).get("exact-len")
        extra = f", .minlen = {minlen}" if minlen else ""
        out.write(f"\t[{name}] = {{ .type = {TYPES[attr['type']]}{extra} }},\n")
    out.write("};\n")
    stats = next(s for s in spec["attribute-sets"] if s["name"] == "stats")
    out.write("\n/* The counters: their names as shown, and what each counts. */\n"
              "const struct netagg_stat_info netagg_stat_info[NETAGG_STAT_MAX + 1] = {\n")
    for attr in stats["attributes"]:
        if attr["type"] == "unused":
            continue
        name = (stats["name-prefix"] + attr["name"]).upper().replace("-", "_")
        doc = " ".join(attr["doc"].split()).replace("\\", "\\\\").replace('"', '\\"')
        out.write(f"\t[{name}] = {{ \"{attr['name'].replace('-', '_')}\",\n"
                  f"\t\t\"{doc}\" }},\n")
    out.write("};\n")
EOF

if $check; then
	rc=0
	for f in "${OUTPUTS[@]}"; do
		diff -u "$f" "$tmp/out/$f" || rc=1
	done
	exit $rc
fi
for f in "${OUTPUTS[@]}"; do
	cp "$tmp/out/$f" "$f"
done
