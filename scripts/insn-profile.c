// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions each vCPU executes,
 * per translation block: an exact profile where perf, under TCG, samples
 * only idle time (see docs/performance.md). scripts/profile.sh loads it,
 * symbolises the blocks with the guest's /proc/kallsyms and prints where
 * the instructions of one CPU went.
 *
 *   qemu-system-x86_64 ... -plugin insn-profile.so,mark=PATH
 *
 * Snapshots are taken when the guest asks: whenever the file PATH exists
 * (the guest creates it on a shared directory), the counts so far are
 * written to PATH.N (N = 1, 2, ...) and PATH is removed, which tells the
 * guest the snapshot is taken. A difference of two snapshots is what ran
 * between them. Each line: block address, instructions in the block, then
 * the times each vCPU executed it.
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

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_VCPUS 8
#define HASH_BITS 16

struct block {
	uint64_t vaddr;
	uint64_t insns;
	/* Each written by its vCPU's thread only; read racily by snapshots. */
	uint64_t execs[MAX_VCPUS];
	struct block *hash_next;
	struct block *all_next;
};

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

	if (vcpu < MAX_VCPUS)
		b->execs[vcpu]++;
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
		b->hash_next = table[h];
		table[h] = b;
		b->all_next = all_blocks;
		all_blocks = b;
	}
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
					     QEMU_PLUGIN_CB_NO_REGS, b);
}

static void snapshot(void)
{
	char path[4096];
	struct block *b;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s.%u", mark, ++snapshots);
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
		fputc('\n', f);
	}
	pthread_mutex_unlock(&lock);
	fclose(f);
}

/* Polls for the guest's request: no guest instruction can signal us. */
static void *poll_mark(void *arg)
{
	(void)arg;
	while (!stopping) {
		if (access(mark, F_OK) == 0) {
			snapshot();
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
