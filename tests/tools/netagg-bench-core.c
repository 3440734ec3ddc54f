// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-bench-core - how fast the reduction core sums, natively, next to
 * how fast this machine reads memory at all.
 *
 * The core is core/reduce.c and core/reduce_fpu.c, the module's own code
 * built for userspace. Summing K inputs of S bytes is what a tree slot does
 * for K children: copy the first, add the others (netagg_reduce()). The
 * inputs come from a pool far larger than the caches, one fresh region per
 * sum, so each byte is read from memory once, as a packet payload arriving
 * from a NIC would be at worst; the memory-read bandwidth, measured in the
 * same run over the same pool with the widest loads the CPU has, is then
 * the limit, and the table gives the core's rate as a fraction of it. The
 * "hot" column sums the same K inputs again and again (all in cache).
 *
 * float16 and bfloat16 are summed as a slot sums them: the first input
 * widened into float32 accumulators, the others added to them, the sum
 * narrowed back at the end; S is the inputs' size, 2 bytes an element.
 *
 * Rates are input bytes summed per second: K x S per sum.
 *
 * Then a second table: the K-input sum in one pass (netagg_add_many(),
 * every child's contribution of a VID summed at once in a fixed order)
 * against K - 1 two-input passes (netagg_add(), then netagg_reduce()),
 * which give the same bits: float32, K packets' payloads of 1472 bytes,
 * each in a 2 KiB buffer of its own at byte 130 (64 bytes of headroom and
 * 66 of headers, so misaligned by 2, as a received payload is), into a
 * cache-line aligned sum.
 *
 * Output: Markdown tables on stdout (and in --out FILE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "half.h"
#include "reduce.h"
#include "tool.h"

#define POOL_BYTES	(512ul << 20)	/* well past any last-level cache */
#define MIN_SECONDS	0.04		/* per measurement */
#define TRIES		3		/* measurements of each; the best counts */

static const unsigned int fan_ins[] = { 2, 4, 8, 32 };
static const unsigned int sizes_kib[] = { 1, 2, 4, 8, 16, 32, 64 };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef uint64_t u64x4 __attribute__((vector_size(32)));
typedef uint64_t u64x2 __attribute__((vector_size(16)));

/*
 * Read every byte of the pool, four independent accumulators wide, and
 * return something of it so that the compiler cannot drop the loads.
 */
__attribute__((target("avx2")))
static uint64_t read_avx2(const void *p, size_t bytes)
{
	const u64x4 *v = p;
	u64x4 a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	size_t i;

	for (i = 0; i < bytes / 32; i += 4) {
		a ^= v[i];
		b ^= v[i + 1];
		c ^= v[i + 2];
		d ^= v[i + 3];
	}
	a ^= b ^ c ^ d;
	return a[0] ^ a[1] ^ a[2] ^ a[3];
}

static uint64_t read_sse2(const void *p, size_t bytes)
{
	const u64x2 *v = p;
	u64x2 a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	size_t i;

	for (i = 0; i < bytes / 16; i += 4) {
		a ^= v[i];
		b ^= v[i + 1];
		c ^= v[i + 2];
		d ^= v[i + 3];
	}
	a ^= b ^ c ^ d;
	return a[0] ^ a[1];
}

static volatile uint64_t sink;

/* Best of three passes over the whole pool, in bytes per second. */
static double memory_read_rate(const void *pool, enum netagg_simd best)
{
	double t, rate = 0;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		t = now();
		if (best == NETAGG_SIMD_AVX2)
			sink = read_avx2(pool, POOL_BYTES);
		else
			sink = read_sse2(pool, POOL_BYTES);
		t = now() - t;
		if (POOL_BYTES / t > rate)
			rate = POOL_BYTES / t;
	}
	return rate;
}

/*
 * Sums of k inputs of size bytes into dst for at least MIN_SECONDS; the
 * inputs walk the pool unless hot. Bytes summed per second.
 */
static double sum_rate_once(enum netagg_simd simd, uint8_t dtype, uint8_t *pool,
		       uint8_t *dst, unsigned int k, size_t size, int hot)
{
	size_t off = 0, group = k * size, sums = 0;
	double t0 = now(), t;
	unsigned int i;

	do {
		/* A batch between clock reads, so they cost nothing. */
		for (unsigned int b = 0; b < 16; b++) {
			if (!hot && (off += group) + group > POOL_BYTES)
				off = 0;
			if (netagg_dtype_half(dtype))
				netagg_widen(simd, dtype, dst, pool + off, size / 2);
			else
				memcpy(dst, pool + off, size);
			for (i = 1; i < k; i++)
				netagg_reduce(simd, dtype, dst, pool + off + i * size,
					      size / netagg_dtype_size(dtype));
			if (netagg_dtype_half(dtype))
				netagg_narrow(simd, dtype, dst, dst, size / 2);
			sums++;
		}
		t = now() - t0;
	} while (t < MIN_SECONDS);
	return (double)sums * group / t;
}

/* The best of TRIES: what the code can do when nothing else disturbs it. */
static double sum_rate(enum netagg_simd simd, uint8_t dtype, uint8_t *pool,
		       uint8_t *dst, unsigned int k, size_t size, int hot)
{
	double r, best = 0;
	int i;

	for (i = 0; i < TRIES; i++) {
		r = sum_rate_once(simd, dtype, pool, dst, k, size, hot);
		if (r > best)
			best = r;
	}
	return best;
}

/* The one-pass table: K inputs, each a packet's payload in its own buffer. */
static const unsigned int many_fan_ins[] = { 4, 8 };

#define MANY_PAYLOAD	1472	/* bytes: a 1500-byte MTU less IP and UDP */
#define MANY_BUF	2048	/* one packet's buffer */
#define MANY_OFFSET	130	/* its payload: 64 of headroom, 66 of headers */
#define MANY_K_MAX	8

/*
 * K payloads of float32 summed into dst, in one pass or in K - 1 two-input
 * passes, for at least MIN_SECONDS; the K buffers walk the pool unless hot.
 * Bytes of input summed per second.
 */
static double many_rate_once(enum netagg_simd simd, uint8_t *pool,
			     uint8_t *dst, unsigned int k, int hot, int one_pass)
{
	const unsigned int n = MANY_PAYLOAD / 4;
	size_t off = 0, group = k * MANY_BUF, sums = 0;
	const void *src[MANY_K_MAX];
	double t0 = now(), t;
	unsigned int i;

	do {
		for (unsigned int b = 0; b < 16; b++) {
			if (!hot && (off += group) + group > POOL_BYTES)
				off = 0;
			for (i = 0; i < k; i++)
				src[i] = pool + off + i * MANY_BUF + MANY_OFFSET;
			if (one_pass) {
				netagg_add_many(simd, NETAGG_DTYPE_F32, dst, src, k, n);
			} else {
				netagg_add(simd, NETAGG_DTYPE_F32, dst, src[0], src[1], n);
				for (i = 2; i < k; i++)
					netagg_reduce(simd, NETAGG_DTYPE_F32, dst, src[i], n);
			}
			sums++;
		}
		t = now() - t0;
	} while (t < MIN_SECONDS);
	return (double)sums * k * MANY_PAYLOAD / t;
}

static double many_rate(enum netagg_simd simd, uint8_t *pool, uint8_t *dst,
			unsigned int k, int hot, int one_pass)
{
	double r, best = 0;
	int i;

	for (i = 0; i < TRIES; i++) {
		r = many_rate_once(simd, pool, dst, k, hot, one_pass);
		if (r > best)
			best = r;
	}
	return best;
}

/* Small gradient-like values of the type: no inf/NaN slow paths. */
static void fill_pool(uint8_t *pool, uint8_t dtype)
{
	size_t n = POOL_BYTES / netagg_dtype_size(dtype);
	uint16_t *h = (uint16_t *)pool;
	float *f = (float *)pool;
	uint32_t bits;
	float v;

	for (size_t i = 0; i < n; i++) {
		v = ((int)(i * 2654435761u % 2001) - 1000) * 1e-6f;
		memcpy(&bits, &v, sizeof(bits));
		if (dtype == NETAGG_DTYPE_F16)
			h[i] = netagg_f32_to_f16(bits);
		else if (dtype == NETAGG_DTYPE_BF16)
			h[i] = netagg_f32_to_bf16(bits);
		else
			f[i] = v;	/* i32 sums the same bits */
	}
}

static const char *dtype_name(uint8_t dtype)
{
	static const char *const names[] = {
		[NETAGG_DTYPE_F32] = "f32", [NETAGG_DTYPE_I32] = "i32",
		[NETAGG_DTYPE_F16] = "f16", [NETAGG_DTYPE_BF16] = "bf16",
	};

	return names[dtype];
}

static void usage(FILE *f)
{
	fputs("Usage: netagg-bench-core [--out FILE] [--quick]\n"
	      "  --out FILE   also write the table to FILE\n"
	      "  --quick      f32 only, and no scalar column\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum netagg_simd best = netagg_simd_best(), simd;
	const char *out_path = NULL;
	double mem, r[NETAGG_SIMD_NUM], hot, cold_best;
	uint8_t *pool, *dst_buf, *dst, dtype;
	char *table = NULL;
	size_t table_len = 0;
	unsigned int fi, si;
	int opt, quick = 0;
	FILE *t;

	opterr = 0;	/* we word the errors ourselves */
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out_path = optarg;
			break;
		case 'q':
			quick = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			netagg_bad_option(argv, opt);
		}
	}
	netagg_no_operands(argc, argv);

	pool = aligned_alloc(64, POOL_BYTES);
	/*
	 * The sum's cache-line aligned start is 1600 bytes past a 4 KiB line:
	 * never a multiple of 4 KiB away from an input, whose loads would
	 * otherwise wait on stores to the same low address bits (4K aliasing,
	 * an artefact of the pool's regular layout).
	 */
	dst_buf = aligned_alloc(4096, (128 << 10) + 4096);	/* 64 KiB of halves */
	dst = dst_buf + 1600;
	if (!pool || !dst_buf)
		netagg_die("out of memory for a %lu MiB pool", POOL_BYTES >> 20);
	fill_pool(pool, NETAGG_DTYPE_F32);
	mem = memory_read_rate(pool, best);

	t = open_memstream(&table, &table_len);
	if (!t)
		netagg_die("open_memstream: %s", strerror(errno));
	fprintf(t, "Memory read bandwidth (%s loads over %lu MiB, best of 3): %.2f GB/s\n\n",
		netagg_simd_names[best], POOL_BYTES >> 20, mem / 1e9);
	fprintf(t, "Sums of K inputs of S bytes, GB/s of input summed; inputs from memory\n"
		"(\"hot\": the same inputs again, in cache); best of %d runs of %.0f ms.\n"
		"Ratio: the best from memory over the memory read bandwidth.\n\n",
		TRIES, MIN_SECONDS * 1e3);
	fprintf(t, "| dtype | K | S | scalar | sse2 | avx2 | %s hot | ratio to memory read |\n",
		netagg_simd_names[best]);
	fprintf(t, "|---|---|---|---|---|---|---|---|\n");
	for (dtype = NETAGG_DTYPE_F32; dtype <= NETAGG_DTYPE_MAX; dtype++) {
		if (quick && dtype != NETAGG_DTYPE_F32)
			continue;
		fill_pool(pool, dtype);
		for (fi = 0; fi < ARRAY_SIZE(fan_ins); fi++) {
			for (si = 0; si < ARRAY_SIZE(sizes_kib); si++) {
				size_t size = sizes_kib[si] << 10;

				cold_best = 0;
				for (simd = 0; simd < NETAGG_SIMD_NUM; simd++) {
					r[simd] = 0;
					if (simd > best || (quick && simd == NETAGG_SIMD_SCALAR))
						continue;
					r[simd] = sum_rate(simd, dtype, pool, dst,
							   fan_ins[fi], size, 0);
					if (r[simd] > cold_best)
						cold_best = r[simd];
				}
				hot = sum_rate(best, dtype, pool, dst, fan_ins[fi], size, 1);
				fprintf(t, "| %s | %u | %u KiB |", dtype_name(dtype),
					fan_ins[fi], sizes_kib[si]);
				for (simd = 0; simd < NETAGG_SIMD_NUM; simd++)
					if (r[simd])
						fprintf(t, " %.2f |", r[simd] / 1e9);
					else
						fprintf(t, " - |");
				fprintf(t, " %.2f | %.2f |\n", hot / 1e9, cold_best / mem);
			}
		}
	}

	fill_pool(pool, NETAGG_DTYPE_F32);
	fprintf(t, "\nK-input sums in one pass (netagg_add_many()) against K - 1 two-input\n"
		"passes (netagg_add(), then netagg_reduce()), the same bits: float32, K\n"
		"payloads of %u bytes, each in a %u-byte buffer of its own at byte %u\n"
		"(misaligned by 2), into a cache-line aligned sum. GB/s of input summed;\n"
		"inputs from memory (\"hot\": the same buffers again, in cache); best of\n"
		"%d runs of %.0f ms. Ratio: one pass over the passes.\n\n",
		MANY_PAYLOAD, MANY_BUF, MANY_OFFSET, TRIES, MIN_SECONDS * 1e3);
	fprintf(t, "| K | simd | passes | one pass | ratio | passes hot | one pass hot | ratio hot |\n");
	fprintf(t, "|---|---|---|---|---|---|---|---|\n");
	for (fi = 0; fi < ARRAY_SIZE(many_fan_ins); fi++) {
		for (simd = 0; simd <= best; simd++) {
			unsigned int k = many_fan_ins[fi];
			double p, o, ph, oh;

			if (quick && simd == NETAGG_SIMD_SCALAR)
				continue;
			p = many_rate(simd, pool, dst, k, 0, 0);
			o = many_rate(simd, pool, dst, k, 0, 1);
			ph = many_rate(simd, pool, dst, k, 1, 0);
			oh = many_rate(simd, pool, dst, k, 1, 1);
			fprintf(t, "| %u | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
				k, netagg_simd_names[simd], p / 1e9, o / 1e9, o / p,
				ph / 1e9, oh / 1e9, oh / ph);
		}
	}
	fclose(t);
	fputs(table, stdout);
	if (out_path) {
		FILE *f = fopen(out_path, "w");

		if (!f || fputs(table, f) == EOF || fclose(f))
			netagg_die("%s: %s", out_path, strerror(errno));
	}
	free(table);
	free(pool);
	free(dst_buf);
	return 0;
}
