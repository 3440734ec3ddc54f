# netagg: the kernel module, the userspace tools, the demo and the tests.
#
#   make            build kmod/netagg.ko, the userspace product (lib/ the
#                   library, cli/ the CLI, tools/ netagg-allreduce, mpi/
#                   libnetagg-mpi.so, man/ the man pages) and tests/tools/
#                   (the test and bench tools) (KDIR= or KVER= to pick the
#                   kernel; default: newest Debian headers whose kernel
#                   image is installed)
#   make demo       install what is missing, build, run the main job in a VM
#   make check      install what is missing, build, run every test
#   make check-kernels  the same on Linux 6.1, 6.12 and 6.12-rt in turn
#                   (installs the kernels; ~2 h; KERNELS="6.12" for one)
#   make check-debug    the netns tests on a debug kernel of its own (KASAN,
#                   lockdep, KMEMLEAK, UBSAN...: lab/debug-kernel/), built
#                   once; T="netagg_churn netagg_hostile" for some
#   make bench      benchmarks (not tests): the reduction core natively, the
#                   datapath in the VM, netagg against Gloo and Open MPI;
#                   a report in tests/out/bench.md
#   make profile    instructions per packet on the switch, against
#                   forwarding, and the functions they go to (a QEMU plugin
#                   counts them), per allreduced byte, and where the
#                   allreduces' wall time goes (perf); tests/out/profile/report.md
#   make train      train a model on 4 workers in the VM, DDP through gloo
#                   and through the netagg hook (tests/out/train/)
#   make dkms       register the module with DKMS and build it for every
#                   installed kernel (scripts/dkms.sh; then dkms install)
#   make install    the library (shared, static, pkg-config file netagg),
#                   its headers, libnetagg-mpi.so, the CLI,
#                   netagg-allreduce and netagg-agent's systemd unit under
#                   PREFIX (default /usr/local; DESTDIR= for staging), the
#                   agent's settings in PREFIX/etc/netagg/agent.env if
#                   absent (SYSCONFDIR= to put them elsewhere)
#   make checkpatch the kernel's style check over kmod/ and uapi/, and its
#                   kernel-doc check over kmod/
#   make netlink-gen    render the netlink family's files from
#                   uapi/netagg.yaml (scripts/netlink-gen.sh)

# Not exported: on a fresh machine it is empty until deps.sh has run, and the
# sub-makes below must compute it again. A KVER given on the command line
# reaches them, and the test and demo scripts, by itself.
KVER ?= $(shell scripts/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build

all: module userspace tools

module:
	@test -n "$(KVER)" -a -d "$(KDIR)" || { \
		echo "no kernel build tree (KDIR='$(KDIR)'): run scripts/deps.sh or set KDIR=" >&2; \
		exit 1; }
	@scripts/kbuild-btf $(KVER)
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# One after the other: cli/, tools/ and tests/tools/ share util/'s objects,
# and tools/ and mpi/ link lib/'s library.
USERSPACE_DIRS := lib cli tools mpi man systemd

userspace:
	for d in $(USERSPACE_DIRS); do $(MAKE) -C $$d || exit 1; done

tools: userspace
	$(MAKE) -C tests/tools

deps:
	scripts/deps.sh

# deps run first, so the sub-make sees the kernel they may have installed.
demo: deps
	$(MAKE) all
	lab/vm-run $${KVER:+--kernel "$$KVER"} -- scripts/demo.sh

check: deps
	$(MAKE) all
	tests/run.sh

# Builds and boots each kernel in turn, so it calls make itself.
check-kernels:
	lab/check-kernels.sh

# Builds its kernel and the module against it, so it calls make itself.
check-debug:
	lab/check-debug.sh

# Benchmarks: figures, not tests; never part of make check. Their deps add
# the peers netagg is compared with, and build the Open MPI one.
bench:
	scripts/deps.sh --bench
	$(MAKE) all tests/out/mpi-allreduce
	lab/bench/bench.sh

# The Open MPI peer of make bench, section f: not in "all", as mpicc comes
# with the bench's packages only.
tests/out/mpi-allreduce: lab/bench/mpi-allreduce.c util/output.c util/output.h \
			 util/exitcode.h util/mark.h
	@mkdir -p $(@D)
	mpicc -O2 -Wall -Wextra -Werror -Iutil -o $@ $< util/output.c

profile: deps
	$(MAKE) all
	lab/profile/profile.sh

bench-loss: deps
	$(MAKE) all
	lab/vm-run $${KVER:+--kernel "$$KVER"} --timeout 3000 -- lab/bench/bench-loss.sh

cluster-demo: deps
	$(MAKE) all
	lab/vm-run $${KVER:+--kernel "$$KVER"} -- scripts/cluster-demo.sh

train: deps
	$(MAKE) all
	lab/vm-run $${KVER:+--kernel "$$KVER"} --timeout 3000 -- lab/train.sh

dkms: deps
	scripts/dkms.sh

install: userspace
	for d in $(USERSPACE_DIRS); do $(MAKE) -C $$d install || exit 1; done

# The netlink family's generated files, from uapi/netagg.yaml.
netlink-gen:
	scripts/netlink-gen.sh

checkpatch:
	scripts/checkpatch.sh

clean:
	-test -d "$(KDIR)" && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	for d in $(USERSPACE_DIRS) tests/tools; do $(MAKE) -C $$d clean; done
	rm -rf tests/out

.PHONY: all module userspace tools deps demo cluster-demo check check-kernels check-debug bench profile bench-loss train dkms install netlink-gen \
	checkpatch clean
