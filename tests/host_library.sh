#!/bin/bash
# The library as users get it, on the host (nothing is sent): make install
# into a scratch prefix gives libnetagg.so.4 with its soname, the headers,
# netagg.pc, the CLI's bash completion and the man pages; a program built with `pkg-config --cflags --libs netagg`
# links the shared library and runs (tests/lib/libcheck.c, whose own KTAP
# lines are counted here as subtests), and a C++ one builds and links; a
# program with its own copy of the first soname-4 structures
# (tests/lib/libcheck-old.c) works with the library, and unchanged with a
# newer one built with a field appended to each structure (the sz rule); pip
# installs the Python package from the checkout, with the library inside
# it, and it imports from there. The programs, the Python package and
# dkms.conf all give VERSION's version. The library's files (the headers
# it is built with too) and the Python package's are under licences that
# any code may link, each text in LICENSES/.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
PY=/usr/bin/python3
trap 'rm -rf "$TEST_TMP"' EXIT
prefix=$TEST_TMP/prefix
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig

ktap_plan 19

check "make install PREFIX=<scratch> installs the library, headers and netagg.pc" \
	make -s install PREFIX="$prefix"
check "... the CLI's bash completion, where bash-completion looks, and the man pages" \
	test -f "$prefix/share/bash-completion/completions/netagg" \
	-a -f "$prefix/share/man/man8/netagg.8" -a -f "$prefix/share/man/man1/netagg-allreduce.1" \
	-a -f "$prefix/share/man/man3/libnetagg.3"
check_eq "pkg-config --cflags --libs netagg" \
	"-I$prefix/include/netagg -L$prefix/lib -lnetagg" \
	"$(echo $(pkg-config --cflags --libs netagg 2>&1))"
check_eq "the installed library's soname" "libnetagg.so.4" \
	"$(objdump -p "$prefix/lib/libnetagg.so" 2>&1 | awk '/SONAME/ { print $2 }')"
# shellcheck disable=SC2046
check "a program builds against it with pkg-config's flags" \
	cc -Wall -Wextra -Werror -o "$TEST_TMP/libcheck" tests/lib/libcheck.c \
	$(pkg-config --cflags --libs netagg)
check_eq "... linked to the shared library, not the static one" "libnetagg.so.4" \
	"$(objdump -p "$TEST_TMP/libcheck" 2>&1 | awk '/NEEDED.*netagg/ { print $2 }')"
LD_LIBRARY_PATH=$prefix/lib "$TEST_TMP/libcheck" >"$TEST_TMP/libcheck.out" 2>&1
rc=$?
sed 's/^/    /' "$TEST_TMP/libcheck.out"
check_eq "... and runs: every check of tests/lib/libcheck.c held" "0 29" \
	"$rc $(grep -c '^ok ' "$TEST_TMP/libcheck.out")"
# shellcheck disable=SC2046
check "a C++ program builds against the header too (extern \"C\"), and links" \
	c++ -Wall -Wextra -Werror -pedantic -o "$TEST_TMP/libcheck++" -x c++ - \
	$(pkg-config --cflags --libs netagg) <<'EOF'
#include <cerrno>

#include <libnetagg.h>

int main()
{
	netagg_worker *w = nullptr;

	return netagg_worker_open(nullptr, &w) == -EINVAL ? 0 : 1;
}
EOF

# A program built against an earlier struct size still works with the
# library: one built with the first layout of soname 4, frozen in
# libcheck-old.c, with this library (which appended fields since: dctcp,
# port, dscp, keyed, key; window_end, the cuts, rto_us and bad_tags), and
# with these sources with
# one more field appended to each structure, as a later version's would be
# (and CFG_LAST moved to it, as that version's diff would).
# shellcheck disable=SC2046
check "a program with its own copy of the first soname-4 structures builds (tests/lib/libcheck-old.c)" \
	cc -Wall -Wextra -Werror -o "$TEST_TMP/libcheck-old" tests/lib/libcheck-old.c \
	$(pkg-config --cflags --libs netagg)
LD_LIBRARY_PATH=$prefix/lib "$TEST_TMP/libcheck-old" newer >"$TEST_TMP/old.out" 2>&1
rc=$?
sed 's/^/    /' "$TEST_TMP/old.out"
check_eq "... and works with this library, whose structures grew since, unchanged" "0 5" \
	"$rc $(grep -c '^ok ' "$TEST_TMP/old.out")"
newer=$TEST_TMP/newer
mkdir -p "$newer"
cp lib/*.[ch] "$newer/"
sed -i 's|^\t/\* New fields go here, and only here. \*/$|\tuint64_t later;\n&|' \
	"$newer/libnetagg.h"
sed -i 's|^#define CFG_LAST\t.*$|#define CFG_LAST\tlater|' "$newer/worker.h"
check "a newer library builds: the same sources, a field appended to each structure" \
	cc -std=gnu11 -Wall -Wextra -Werror -fPIC -shared -I"$newer" -Icore -Iuapi \
	-DNETAGG_VERSION="\"$(cat VERSION)\"" -Wl,-soname,libnetagg.so.4 \
	-Wl,--version-script=lib/libnetagg.map -o "$newer/libnetagg.so.4" \
	"$newer"/*.c
LD_LIBRARY_PATH=$newer "$TEST_TMP/libcheck-old" newer >"$TEST_TMP/old-newer.out" 2>&1
rc=$?
sed 's/^/    /' "$TEST_TMP/old-newer.out"
check_eq "... and the program built against the previous struct size works with it unchanged" \
	"0 5" "$rc $(grep -c '^ok ' "$TEST_TMP/old-newer.out")"

# One version (VERSION) everywhere a user or operator reads one.
v=$(cat VERSION)
check_eq "netagg -V and netagg-allreduce --version print VERSION" \
	"netagg $v netagg-allreduce $v" \
	"$(cli/netagg -V 2>&1) $(tools/netagg-allreduce --version 2>&1)"
check_eq "the library's header, the Python package, its pyproject.toml and dkms.conf say VERSION too" \
	"$v $v $v $v" \
	"$(awk '/#define LIBNETAGG_VERSION_(MAJOR|MINOR|PATCH)/ { v = v (v ? "." : "") $3 } END { print v }' lib/libnetagg.h) \
$(cd python && "$PY" -c 'import netagg; print(netagg.__version__)' 2>&1) \
$(sed -n 's/^version = "\(.*\)"$/\1/p' python/pyproject.toml) \
$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)"

# What training code links or imports may be used by code of any licence:
# every file the library is built from (its sources and every header they
# include, as the compiler finds them) and the Python package's, under a
# licence that allows it; every licence named has its text in LICENSES/.
spdx() { sed -n '1,2s/^.*SPDX-License-Identifier: \(.*\)$/\1/p' "$1" | sed 's| \*/$||'; }
lib_files=$(cc -MM -Icore -Iuapi lib/*.c |
	tr ' \\' '\n\n' | grep -v -e ':$' -e '^$' | sort -u)
bad=
for f in $lib_files python/netagg/*.py python/setup.py; do
	id=$(spdx "$f")
	case $id in
	*BSD-2-Clause*|*BSD-3-Clause*|*Linux-syscall-note*) ;;
	*) bad="$bad $f:${id:-none}" ;;
	esac
	for l in $(tr -d '()' <<<"$id" | sed 's/ OR / /g; s/ WITH / /g'); do
		[ -f "LICENSES/$l" ] || bad="$bad $f:$l-has-no-text"
	done
done
check_eq "the library's files and the Python package's may be linked by any code; each licence's text is in LICENSES/" \
	"LGPL-2.1 OR BSD-2-Clause" \
	"$(sed -n 's/^license = {text = "\(.*\)"}$/\1/p' python/pyproject.toml)${bad}"

site=$TEST_TMP/site
check "pip installs the Python package from the checkout" \
	"$PY" -m pip install -q --no-build-isolation --no-deps --no-index \
	--target "$site" ./python
check_eq "... and it imports from there, with the library it bundles" \
	"$site/netagg/libnetagg.so.4" \
	"$(cd / && env -u NETAGG_LIBRARY PYTHONPATH="$site" "$PY" -c \
		'import netagg._clib as c; print(c.lib._name)' 2>&1)"
check_eq "... with its programs, netagg-ctl and netagg-agent, which run" "0 0" \
	"$(for p in netagg-ctl netagg-agent; do
		(cd / && PYTHONPATH="$site" "$site/bin/$p" --help >/dev/null 2>&1); echo $?
	done | paste -sd' ')"

# make install's unit for the agent, as systemd takes it, its ExecStart
# the program pip installed above (the unit names /usr/local/bin's), and
# its settings under the prefix of case 1, not in the host's /etc.
unit=$prefix/lib/systemd/system/netagg-agent.service
sed "s|^ExecStart=/usr/local/bin/netagg-agent$|ExecStart=$site/bin/netagg-agent|" \
	"$unit" >"$TEST_TMP/netagg-agent.service"
systemd-analyze verify --man=no "$TEST_TMP/netagg-agent.service" >"$TEST_TMP/verify" 2>&1
echo "exit $?" >>"$TEST_TMP/verify"
check_eq "make install: netagg-agent's systemd unit, clean to systemd-analyze verify, naming its settings under the prefix (mode 600)" \
	"exit 0 EnvironmentFile=$prefix/etc/netagg/agent.env 600" \
	"$(paste -sd' ' "$TEST_TMP/verify") $(grep '^EnvironmentFile=' "$unit") $(stat -c %a "$prefix/etc/netagg/agent.env")"
ktap_finish
