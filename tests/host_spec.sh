#!/bin/bash
# The netlink spec uapi/netagg.yaml against the kernel's YNL tools and
# against the C that implements the family, on the host: the spec passes
# the kernel's genetlink-legacy schema; the kernel's ynl-gen-c.py renders a
# uAPI header from it, and that header and uapi/linux/netagg.h name the same
# constants, enumerators and defines of the family with the same values,
# both ways; the CLI's reply policy types every attribute as the spec does;
# and a spec that lost an attribute is caught, so the comparison can fail.
# tests/netagg_spec.sh drives the module with the spec through the ynl
# client and holds the module's own policies against it.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
PY=/usr/bin/python3
SPEC=uapi/netagg.yaml
trap 'rm -rf "$TEST_TMP"' EXIT

ktap_plan 8

ynl=$(scripts/ksrc ynl 2>&1)
if [ -d "$ynl/tools/net/ynl" ]; then
	ktap_result ok "the kernel's YNL tools are at hand (linux-source-6.12)"
else
	ktap_result fail "the kernel's YNL tools are at hand (linux-source-6.12)" "$ynl"
	ynl=/nonexistent
fi

check "the spec passes the kernel's genetlink-legacy schema" \
	env -C "$ynl/tools/net/ynl" "$PY" -c \
	'import sys; from lib import SpecFamily; SpecFamily(sys.argv[1], sys.argv[2])' \
	"$PWD/$SPEC" "$ynl/Documentation/netlink/genetlink-legacy.yaml"

# render SPEC OUT: the uAPI header ynl-gen-c.py makes of SPEC. The generator
# wants the spec where the kernel keeps its own (it names it by its path
# from the tree's top, found by MAINTAINERS, and looks for the schema
# beside specs/): lay out that much of a kernel tree.
render()
{
	local k=$TEST_TMP/k
	rm -rf "$k"
	mkdir -p "$k/Documentation/netlink/specs" "$(dirname "$2")"
	: >"$k/MAINTAINERS"
	ln -s "$ynl/Documentation/netlink/genetlink-legacy.yaml" "$k/Documentation/netlink/"
	cp "$1" "$k/Documentation/netlink/specs/netagg.yaml"
	timeout 60 "$PY" "$ynl/tools/net/ynl/ynl-gen-c.py" --mode uapi --header \
		--spec "$k/Documentation/netlink/specs/netagg.yaml" -o "$2"
}

# names FILE [START]: the enumerators and object-like defines of FILE, from
# the line matching START on (the family's part of uapi/linux/netagg.h
# starts at its first enum; the wire format before it is no netlink's).
names()
{
	sed -n "/${2:-^}/,\$p" "$1" | sed -n -E \
		-e 's/^[[:space:]]+(_*NETAGG_[A-Z0-9_]+)[[:space:]]*(=[^,]*)?,?[[:space:]]*(\/\*.*)?$/\1/p' \
		-e 's/^#define[[:space:]]+(_*NETAGG_[A-Z0-9_]+)[[:space:]].*/\1/p' | sort -u
}

# values INCLUDE NAMES-FILE: each name and its value, as the C compiler
# sees linux/netagg.h from INCLUDE.
values()
{
	{
		echo '#include <stdio.h>'
		echo '#include <linux/netagg.h>'
		echo 'static void s(const char *n, const char *v) { printf("%s \"%s\"\n", n, v); }'
		echo 'static void u(const char *n, unsigned long long v) { printf("%s %llu\n", n, v); }'
		echo '#define P(x) _Generic((x), char *: s, default: u)(#x, x)'
		echo 'int main(void) {'
		sed 's/.*/P(&);/' "$2"
		echo 'return 0; }'
	} >"$TEST_TMP/values.c"
	cc -Wall -Werror -I"$1" -o "$TEST_TMP/values" "$TEST_TMP/values.c" &&
		"$TEST_TMP/values"
}

check "ynl-gen-c.py renders a uAPI header from the spec" \
	render "$SPEC" "$TEST_TMP/gen/linux/netagg.h"
names "$TEST_TMP/gen/linux/netagg.h" >"$TEST_TMP/spec.names"
names uapi/linux/netagg.h "^enum netagg_dtype {" >"$TEST_TMP/header.names"
check_eq "every name the spec renders is in uapi/linux/netagg.h" "" \
	"$(comm -23 "$TEST_TMP/spec.names" "$TEST_TMP/header.names" | tr '\n' ' ')"
check_eq "every name of the family in uapi/linux/netagg.h is in the spec" "" \
	"$(comm -13 "$TEST_TMP/spec.names" "$TEST_TMP/header.names" | tr '\n' ' ')"
comm -12 "$TEST_TMP/spec.names" "$TEST_TMP/header.names" >"$TEST_TMP/both.names"
spec_values=$(values "$TEST_TMP/gen" "$TEST_TMP/both.names" 2>&1)
header_values=$(values uapi "$TEST_TMP/both.names" 2>&1)
if [ -s "$TEST_TMP/both.names" ] && [ "$spec_values" == "$header_values" ]; then
	ktap_result ok "... and each has the same value in both ($(wc -l <"$TEST_TMP/both.names") names)"
else
	ktap_result fail "... and each has the same value in both" \
		"$(diff <(echo "$spec_values") <(echo "$header_values"))"
fi

# The CLI parses replies with a libnl policy of its own: each attribute's
# type there is the spec's.
spec_types=$("$PY" -c '
import sys, yaml
nla = {"u8": "NLA_U8", "u16": "NLA_U16", "u32": "NLA_U32", "u64": "NLA_U64",
       "flag": "NLA_FLAG", "nest": "NLA_NESTED"}
spec = yaml.safe_load(open(sys.argv[1]))
for a in next(s for s in spec["attribute-sets"] if s["name"] == "netagg")["attributes"]:
    if a["type"] not in ("unused", "pad"):
        print("NETAGG_A_" + a["name"].upper().replace("-", "_"), nla[a["type"]])
' "$SPEC" 2>&1 | sort)
cli_types=$(sed -n -E 's/^[[:space:]]*\[(NETAGG_A_[A-Z0-9_]+)\][[:space:]]*=[[:space:]]*\{[[:space:]]*\.type[[:space:]]*=[[:space:]]*(NLA_[A-Z0-9]+).*/\1 \2/p' \
	userspace/nl.c | sort)
check_eq "the CLI's reply policy types every attribute as the spec does" \
	"$spec_types" "$cli_types"

# The comparison can fail: a spec without its last attribute, silent-ms.
"$PY" -c '
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
attrs = next(s for s in spec["attribute-sets"] if s["name"] == "netagg")["attributes"]
attrs[:] = [a for a in attrs if a["name"] != "silent-ms"]
for op in spec["operations"]["list"]:
    if "event" in op:
        op["event"]["attributes"].remove("silent-ms")
for s in spec["attribute-sets"]:
    s["attributes"][:] = [a for a in s["attributes"] if s.get("subset-of") is None or a["name"] != "silent-ms"]
out = open(sys.argv[2], "w")
out.write(open(sys.argv[1]).readline())
yaml.safe_dump(spec, out, sort_keys=False)
' "$SPEC" "$TEST_TMP/lost.yaml"
render "$TEST_TMP/lost.yaml" "$TEST_TMP/lost/linux/netagg.h" >/dev/null 2>&1
names "$TEST_TMP/lost/linux/netagg.h" >"$TEST_TMP/lost.names"
check_eq "a spec that lost an attribute is caught (the header's NETAGG_A_SILENT_MS)" \
	"NETAGG_A_SILENT_MS" "$(comm -13 "$TEST_TMP/lost.names" "$TEST_TMP/header.names" | tr '\n' ' ' | sed 's/ $//')"

ktap_finish
