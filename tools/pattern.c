// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-allreduce's buffers: each rank's pattern filled, the expected sum
 * computed, a result checked element by element, or with --pattern bit
 * chunk by chunk for the ranks it sums (netagg-allreduce.c's opening
 * comment says what the patterns are and why they are exact).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "allreduce.h"
#include "half.h"

static bool is_half(const struct params *p)
{
	return p->cfg.dtype == NETAGG_DTYPE_F16 || p->cfg.dtype == NETAGG_DTYPE_BF16;
}

/* What element i of every rank's buffer is a multiple of (--seed shifts it). */
static uint32_t base(const struct params *p, size_t i)
{
	i += p->seed;
	return is_half(p) ? (uint32_t)(i % 4 + 1) << (i / 4 % 4) : (uint32_t)(i % 1000 + 1);
}

static uint32_t float_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float bits_float(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* A float32 value as element i, rounded to the type (exact for the patterns). */
static void put(const struct params *p, void *buf, size_t i, float v)
{
	switch (p->cfg.dtype) {
	case NETAGG_DTYPE_F32:
		((float *)buf)[i] = v;
		break;
	case NETAGG_DTYPE_F16:
		((uint16_t *)buf)[i] = netagg_f32_to_f16(float_bits(v));
		break;
	case NETAGG_DTYPE_BF16:
		((uint16_t *)buf)[i] = netagg_f32_to_bf16(float_bits(v));
		break;
	}
}

/* Element i of a float type as float32 (exact). */
static float get(const struct params *p, const void *buf, size_t i)
{
	switch (p->cfg.dtype) {
	case NETAGG_DTYPE_F16:
		return bits_float(netagg_f16_to_f32(((const uint16_t *)buf)[i]));
	case NETAGG_DTYPE_BF16:
		return bits_float(netagg_bf16_to_f32(((const uint16_t *)buf)[i]));
	default:
		return ((const float *)buf)[i];
	}
}

void pattern_fill(const struct params *p, void *buf)
{
	uint32_t mult = p->bit ? 1U << p->rank : p->rank + 1;

	for (size_t i = 0; i < p->count; i++) {
		if (p->cfg.dtype == NETAGG_DTYPE_I32)
			((int32_t *)buf)[i] = (int32_t)(base(p, i) * mult);
		else
			put(p, buf, i, (float)(base(p, i) * mult));
	}
}

/*
 * The expected result, element by element as pattern_verify() computes it. Each
 * iteration compares the result with it as a whole (memcmp: a few
 * instructions per 32 bytes) and runs pattern_verify() only to report what is
 * wrong: a loop over every element between allreduces would keep the
 * other workers waiting in the next one, and be counted in its
 * instructions (util/mark.h).
 */
void pattern_expect(const struct params *p, void *want)
{
	uint32_t n = p->workers, tri = n * (n + 1) / 2;

	for (size_t i = 0; i < p->count; i++) {
		uint32_t sum = base(p, i) * tri;

		if (p->cfg.dtype == NETAGG_DTYPE_I32)
			((int32_t *)want)[i] = p->avg ? (int32_t)sum / (int32_t)n : (int32_t)sum;
		else	/* rounded to the type once, as pattern_verify() has it */
			put(p, want, i, p->avg ? (float)sum / (float)n : (float)sum);
	}
}

/* Element i of the result; returns the number of wrong elements. */
size_t pattern_verify(const struct params *params, const void *buf, unsigned long iter)
{
	/* A copy the messages below cannot change: its type is tested once. */
	const struct params copy = *params, *p = &copy;
	uint32_t n = p->workers, tri = n * (n + 1) / 2;
	size_t wrong = 0;

	for (size_t i = 0; i < p->count; i++) {
		uint32_t sum = base(p, i) * tri;
		char got[32], want[32];

		if (p->cfg.dtype == NETAGG_DTYPE_I32) {
			int32_t g = ((const int32_t *)buf)[i];
			int32_t e = p->avg ? (int32_t)sum / (int32_t)n : (int32_t)sum;

			if (g == e)
				continue;
			snprintf(got, sizeof(got), "%" PRId32, g);
			snprintf(want, sizeof(want), "%" PRId32, e);
		} else {
			float e = p->avg ? (float)sum / (float)n : (float)sum;
			float g = get(p, buf, i);

			/*
			 * The average is divided in float32 and rounded to
			 * the type once, as the root does. Only for the half
			 * types: this loop runs between allreduces, and a slow
			 * check keeps the other workers waiting in the next.
			 */
			if (is_half(p)) {
				uint16_t rounded;

				put(p, &rounded, 0, e);
				e = get(p, &rounded, 0);
			}
			/* Compare bits: exact, and e is never a NaN. */
			if (!memcmp(&g, &e, sizeof(g)))
				continue;
			snprintf(got, sizeof(got), "%.9g", g);
			snprintf(want, sizeof(want), "%.9g", e);
		}
		if (wrong++ < SHOW_WRONG)
			fprintf(stderr, PROG ": rank %u, iteration %lu: element %zu is %s, expected %s\n",
				p->rank, iter + 1, i, got, want);
	}
	if (wrong > SHOW_WRONG)
		fprintf(stderr, PROG ": rank %u, iteration %lu: %zu elements wrong in all\n",
			p->rank, iter + 1, wrong);
	return wrong;
}

/* Element i as an integer; false if it is not one (or out of range). */
static bool element(const struct params *p, const void *buf, size_t i, uint32_t *v)
{
	if (p->cfg.dtype != NETAGG_DTYPE_I32) {
		float f = get(p, buf, i);

		if (!(f >= 0 && f < 16777216.0f) || f != (float)(uint32_t)f)
			return false;
		*v = (uint32_t)f;
		return true;
	}
	if (((const int32_t *)buf)[i] < 0)
		return false;
	*v = (uint32_t)((const int32_t *)buf)[i];
	return true;
}

/*
 * --pattern bit: each chunk must be (i % 1000 + 1) times one mask of ranks
 * that has this rank, between quorum and workers ranks, within what the
 * results said; with the default quorum the same mask for every chunk.
 * Who contributed: *all keeps the ranks in every chunk, *any those in some.
 * Returns the number of wrong chunks.
 */
size_t pattern_verify_bits(const struct params *p, const void *buf, unsigned long iter,
			   const struct netagg_allreduce_info *info, uint32_t *all,
			   uint32_t *any)
{
	unsigned int mtu = p->cfg.mtu ? p->cfg.mtu : NETAGG_MTU_DEFAULT;
	unsigned int epp = p->cfg.keyed ?
		netagg_elems_per_packet_keyed(p->cfg.trees[0].family, mtu, p->cfg.dtype) :
		netagg_elems_per_packet_af(p->cfg.trees[0].family, mtu, p->cfg.dtype);
	unsigned int quorum = p->cfg.quorum ? p->cfg.quorum : p->workers;
	uint32_t first_mask = 0;
	size_t wrong = 0, without = 0;

	for (size_t c = 0; c * epp < p->count; c++) {
		size_t lo = c * epp, hi = lo + epp < p->count ? lo + epp : p->count;
		uint32_t v, mask = 0;
		unsigned int n;
		const char *why = NULL;

		if (!element(p, buf, lo, &v) || v % base(p, lo))
			why = "is not a sum of ranks";
		else
			mask = v / base(p, lo);
		for (size_t i = lo + 1; !why && i < hi; i++)
			if (!element(p, buf, i, &v) || v != base(p, i) * mask)
				why = "does not sum the same ranks throughout";
		n = __builtin_popcount(mask);
		if (why)
			;
		else if (!(mask & (1U << p->rank)) && ++without > info->late)
			why = "does not sum this rank's contribution (more than the late results)";
		else if (n < quorum || n > p->workers)
			why = "sums a number of ranks the caller does not accept";
		else if (n < info->min_contributors || n > info->max_contributors)
			why = "sums another number of ranks than the results said";
		else if (quorum == p->workers && c && mask != first_mask)
			why = "sums other ranks than chunk 0";
		if (!c)
			first_mask = mask;
		if (!why) {
			*all &= mask;
			*any |= mask;
			continue;
		}
		if (wrong++ < SHOW_WRONG)
			fprintf(stderr, PROG ": rank %u, iteration %lu: chunk %zu (ranks 0x%x) %s\n",
				p->rank, iter + 1, c, mask, why);
	}
	/* Every result marked late, and only those, lacks this rank. */
	if (without != info->late && !wrong++)
		fprintf(stderr, PROG ": rank %u, iteration %lu: %zu chunks lack this rank,"
			" %" PRIu64 " results were marked late\n", p->rank, iter + 1,
			without, info->late);
	if (wrong > SHOW_WRONG)
		fprintf(stderr, PROG ": rank %u, iteration %lu: %zu chunks wrong in all\n",
			p->rank, iter + 1, wrong);
	return wrong;
}

