#!/bin/bash
# The netlink spec uapi/netagg.yaml against the kernel's YNL tools and
# against what is rendered from it, on the host: the spec passes the
# kernel's genetlink-legacy schema; rendering it again (scripts/netlink-gen.sh
# --check, the kernel's ynl-gen-c.py) changes none of the files kept in the
# tree (uapi/linux/netagg_nl.h, kmod/netlink-gen.[ch], the CLI's
# cli/nl-policy.c, with the counters' names and meanings); a spec
# that lost an attribute is caught, so the comparison can fail; the uAPI
# compiles on its own; and the hand-written uapi/linux/netagg.h declares
# nothing the spec declares.
# tests/netagg_spec.sh drives the module with the spec through the ynl
# client and holds the module's own policies against it.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
PY=/usr/bin/python3
SPEC=uapi/netagg.yaml
trap 'rm -rf "$TEST_TMP"' EXIT

ktap_plan 6

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

check "rendering the spec again changes none of the generated files" \
	scripts/netlink-gen.sh --check

# The comparison can fail: a spec without its last attribute, silent-ms.
"$PY" -c '
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
for s in spec["attribute-sets"]:
    s["attributes"][:] = [a for a in s["attributes"] if a["name"] != "silent-ms"]
for op in spec["operations"]["list"]:
    if "event" in op:
        op["event"]["attributes"].remove("silent-ms")
out = open(sys.argv[2], "w")
out.write(open(sys.argv[1]).readline())
yaml.safe_dump(spec, out, sort_keys=False)
' "$SPEC" "$TEST_TMP/lost.yaml"
lost=$(NETAGG_SPEC=$TEST_TMP/lost.yaml scripts/netlink-gen.sh --check 2>&1)
rc=$?
check_eq "a spec that lost an attribute is caught (NETAGG_A_SILENT_MS, in the uAPI and the CLI's policy)" \
	"1 2" "$rc $(grep -c '^-.*NETAGG_A_SILENT_MS' <<<"$lost")"

# The uAPI as a program of its users includes it: alone, warnings errors.
check "uapi/linux/netagg.h and netagg_nl.h compile on their own (C, -Wall -Wextra -Werror)" \
	bash -c 'echo "#include <linux/netagg.h>
int main(void) { return NETAGG_A_MAX + NETAGG_CMD_MAX + NETAGG_STAT_MAX + NETAGG_DTYPE_MAX; }" |
	cc -Wall -Wextra -Werror -Iuapi -x c -o /dev/null -'

# names FILE: the enumerators and object-like defines of FILE.
names()
{
	sed -n -E \
		-e 's/^[[:space:]]+(_*NETAGG_[A-Z0-9_]+)[[:space:]]*(=[^,]*)?,?[[:space:]]*(\/\*.*)?$/\1/p' \
		-e 's/^#define[[:space:]]+(_*NETAGG_[A-Z0-9_]+)[[:space:]].*/\1/p' "$1" | sort -u
}
check_eq "uapi/linux/netagg.h declares nothing netagg_nl.h (the spec) does" "" \
	"$(comm -12 <(names uapi/linux/netagg.h) <(names uapi/linux/netagg_nl.h) | tr '\n' ' ')"

ktap_finish
