#!/bin/bash
# Install every Debian package netagg uses. Idempotent: when everything is
# there it only asks dpkg and exits, so make demo / make check call it first.
#
#   scripts/deps.sh --bench   what make bench and make profile need: the
#                             list below, which has their peers (Open MPI,
#                             for libnetagg-mpi; Gloo, in PyTorch, for the
#                             Python package), and perf (make profile's
#                             wall-time section)
#   scripts/deps.sh --kernels also Linux 6.12 and 6.12-rt, image and
#                             headers (make check-kernels)
#   scripts/deps.sh --debug-kernel
#                             also what building a kernel takes (make
#                             check-debug: lab/debug-kernel/build.sh)
set -euo pipefail

pkgs=(
	build-essential pkg-config		# toolchain
	linux-headers-amd64 linux-image-amd64	# module build tree, VM kernel
	linux-source-6.1 linux-source-6.12	# checkpatch, YNL, kselftest (ksrc)
	python3-yaml python3-jsonschema rsync	# YNL's tools, kselftest's install
	dkms					# make dkms
	qemu-system-x86 busybox-static cpio gzip xz-utils zstd	# the VM
	libnl-3-dev libnl-genl-3-dev		# the netagg CLI
	bash-completion				# the CLI's completion, tested
	man-db groff-base			# the man pages, rendered in a test
	clang libbpf-dev bpftool		# the XDP program, built into the CLI
	dwarves libelf-dev zlib1g-dev		# module BTF (scripts/kbuild-btf)
	libyaml-dev				# netagg-nlfuzz reads the family's spec
	iproute2 iputils-ping kmod procps util-linux jq python3 ethtool	# tests in the VM
	iperf3					# ... the TCP flow netagg shares a link with
	etcd-server etcd-client			# jobs through etcd (docs/cluster.md), its test
	systemd					# systemd-analyze checks the agent's unit
	python3-prometheus-client		# its parser reads netagg stats format prometheus
	python3-numpy python3-torch python3-pip python3-setuptools	# the Python package
	python3-sklearn python3-matplotlib	# make train: its data set and plot
	openmpi-bin libopenmpi-dev		# mpi/libnetagg-mpi.so, its test
	libc6-dbg				# make profile names libc's functions, its test
)
if [ "${1:-}" = --bench ]; then
	pkgs+=(linux-perf)
elif [ "${1:-}" = --kernels ]; then
	pkgs+=(linux-image-6.12-amd64 linux-headers-6.12-amd64
	       linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64)
elif [ "${1:-}" = --debug-kernel ]; then
	pkgs+=(bc bison flex libelf-dev libssl-dev)
elif [ $# -gt 0 ]; then
	echo "usage: scripts/deps.sh [--bench|--kernels|--debug-kernel]" >&2
	exit 2
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}"
