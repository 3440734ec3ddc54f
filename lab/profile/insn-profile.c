// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions each vCPU executes,
 * per translation block: an exact profile where perf, under TCG, samples
 * only idle time (see docs/performance.md). lab/profile/profile.sh loads it,
 * symbolises the blocks with the guest's /proc/kallsyms and prints where
 * the instructions of one CPU went.
 *
 *   qemu-system-x86_64 ... -plugin insn-profile.so,mark=PATH
 *
 * Snapshots are taken when the guest asks: whenever the file PATH exists
 * (the guest creates it on a shared directory), the counts so far are
 * written to PATH.N (N = 1, 2, ...) and PATH is removed, which tells the
 * guest the snapshot is taken. A difference of two snapshots is what ran
 * between them. Each line: block address, instructions in the block, the
 * times each vCPU executed it, then the times each executed it in a timed
 * region. When PATH holds the word "totals", only PATH.N.totals is written
 * (a full snapshot is megabytes): one line a vCPU, "cpu N all A timed T
 * user U kernel K" (instructions since the start, in timed regions, of
 * those in user space and in the kernel), and a last line "marks begins B
 * ends E open O" (O: regions still open when the snapshot was taken).
 * PATH.N.totals is written with every full snapshot too.
 *
 * Timed regions: a guest program (any process, any vCPU) opens one by
 * executing the no-op instruction "nopl 0x6e610001(%rax)" and closes it by
 * "nopl 0x6e610002(%rax)" (util/mark.h); instructions count as timed
 * while at least one region is open, on every vCPU, kernel and user: the
 * whole VM's work while any worker is inside a timed allreduce. Blocks are
 * counted whole, so a region's edges are exact to a block.
 *
 * Debian's QEMU is built with plugin support but ships no qemu-plugin.h;
 * the few declarations needed (plugin API version 1, QEMU 4.2 to 8.x) are
 * below.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn;
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_VCPUS 8
#define HASH_BITS 16
/* Addresses from here up are the kernel's (x86-64). */
#define KERNEL_START 0xffff800000000000ull

/* The markers: 0f 1f 80 and a displacement of 0x6e610001 or 0x6e610002. */
#define MARK_BEGIN 1
#define MARK_END 2

struct block {
	uint64_t vaddr;
	uint64_t insns;
	bool kernel;
	/* Each written by its vCPU's thread only; read racily by snapshots. */
	uint64_t execs[MAX_VCPUS];
	uint64_t timed[MAX_VCPUS];
	struct block *hash_next;
	struct block *all_next;
};

/* Instructions each vCPU ran, in all and in timed regions. */
struct vcpu_total {
	uint64_t all, user, kernel;
	char pad[64 - 3 * sizeof(uint64_t)];
};

static struct vcpu_total totals[MAX_VCPUS];
/* Regions open now; begun and ended since the start. */
static int open_regions;
static uint64_t begins, ends;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *table[1 << HASH_BITS];
static struct block *all_blocks;
static const char *mark;
static unsigned int snapshots;
static pthread_t poller;
static volatile bool stopping;

static unsigned int hash(uint64_t vaddr)
{
	return (unsigned int)((vaddr * 0x9e3779b97f4a7c15ull) >> (64 - HASH_BITS));
}

static void block_exec(unsigned int vcpu, void *data)
{
	struct block *b = data;
	struct vcpu_total *t;

	if (vcpu >= MAX_VCPUS)
		return;
	b->execs[vcpu]++;
	t = &totals[vcpu];
	t->all += b->insns;
	if (__atomic_load_n(&open_regions, __ATOMIC_RELAXED) > 0) {
		b->timed[vcpu]++;
		if (b->kernel)
			t->kernel += b->insns;
		else
			t->user += b->insns;
	}
}

static void mark_exec(unsigned int vcpu, void *data)
{
	int open = __atomic_load_n(&open_regions, __ATOMIC_RELAXED);

	(void)vcpu;
	if ((uintptr_t)data == MARK_BEGIN) {
		__atomic_add_fetch(&open_regions, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&begins, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&ends, 1, __ATOMIC_RELAXED);
	/* An end without its begin (a program killed mid-region) stops at 0. */
	while (open > 0 && !__atomic_compare_exchange_n(&open_regions, &open, open - 1,
							 false, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED))
		;
}

/* Registers mark_exec on the markers among the block's instructions. */
static void find_markers(struct qemu_plugin_tb *tb, size_t n)
{
	const unsigned char *code;
	struct qemu_plugin_insn *insn;
	size_t i;

	for (i = 0; i < n; i++) {
		insn = qemu_plugin_tb_get_insn(tb, i);
		if (qemu_plugin_insn_size(insn) != 7)
			continue;
		code = qemu_plugin_insn_data(insn);
		if (memcmp(code, "\x0f\x1f\x80", 3) || code[4] || code[5] != 0x61 ||
		    code[6] != 0x6e || (code[3] != MARK_BEGIN && code[3] != MARK_END))
			continue;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_exec, QEMU_PLUGIN_CB_NO_REGS,
						       (void *)(uintptr_t)code[3]);
	}
}

/*
 * The same address can be translated again (after a flush, or with other
 * flags): one entry per address and length, so counts add up across
 * translations.
 */
static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	uint64_t insns = qemu_plugin_tb_n_insns(tb);
	unsigned int h = hash(vaddr);
	struct block *b;

	(void)id;
	pthread_mutex_lock(&lock);
	for (b = table[h]; b; b = b->hash_next)
		if (b->vaddr == vaddr && b->insns == insns)
			break;
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b) {
			pthread_mutex_unlock(&lock);
			return;
		}
		b->vaddr = vaddr;
		b->insns = insns;
		b->kernel = vaddr >= KERNEL_START;
		b->hash_next = table[h];
		table[h] = b;
		b->all_next = all_blocks;
		all_blocks = b;
	}
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
					     QEMU_PLUGIN_CB_NO_REGS, b);
	find_markers(tb, insns);
}

static void write_totals(const char *path)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		fprintf(stderr, "insn-profile: %s: %s\n", path, strerror(errno));
		return;
	}
	for (i = 0; i < MAX_VCPUS; i++)
		fprintf(f, "cpu %d all %" PRIu64 " timed %" PRIu64 " user %" PRIu64
			" kernel %" PRIu64 "\n", i, totals[i].all,
			totals[i].user + totals[i].kernel, totals[i].user, totals[i].kernel);
	fprintf(f, "marks begins %" PRIu64 " ends %" PRIu64 " open %d\n",
		__atomic_load_n(&begins, __ATOMIC_RELAXED),
		__atomic_load_n(&ends, __ATOMIC_RELAXED),
		__atomic_load_n(&open_regions, __ATOMIC_RELAXED));
	fclose(f);
}

static void snapshot(bool full)
{
	char path[4096];
	struct block *b;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s.%u", mark, ++snapshots);
	if (full) {
		f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "insn-profile: %s: %s\n", path, strerror(errno));
			return;
		}
		pthread_mutex_lock(&lock);
		for (b = all_blocks; b; b = b->all_next) {
			fprintf(f, "%" PRIx64 " %" PRIu64, b->vaddr, b->insns);
			for (i = 0; i < MAX_VCPUS; i++)
				fprintf(f, " %" PRIu64, b->execs[i]);
			for (i = 0; i < MAX_VCPUS; i++)
				fprintf(f, " %" PRIu64, b->timed[i]);
			fputc('\n', f);
		}
		pthread_mutex_unlock(&lock);
		fclose(f);
	}
	strncat(path, ".totals", sizeof(path) - strlen(path) - 1);
	write_totals(path);
}

/* Whether the guest's request (the file PATH) asks for totals only. */
static bool totals_only(void)
{
	char word[8] = "";
	FILE *f = fopen(mark, "r");

	if (!f)
		return false;
	if (!fgets(word, sizeof(word), f))
		word[0] = 0;
	fclose(f);
	return strncmp(word, "totals", 6) == 0;
}

/* Polls for the guest's request: no guest instruction can signal us. */
static void *poll_mark(void *arg)
{
	(void)arg;
	while (!stopping) {
		if (access(mark, F_OK) == 0) {
			snapshot(!totals_only());
			unlink(mark);
		}
		usleep(20000);
	}
	return NULL;
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	(void)id;
	(void)data;
	stopping = true;
	pthread_join(poller, NULL);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc,
			char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (strncmp(argv[i], "mark=", 5) == 0)
			mark = argv[i] + 5;
	if (!mark || !*mark) {
		fprintf(stderr, "insn-profile: needs mark=PATH\n");
		return -1;
	}
	if (pthread_create(&poller, NULL, poll_mark, NULL)) {
		fprintf(stderr, "insn-profile: cannot start the poller\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
