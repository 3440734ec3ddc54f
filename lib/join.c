// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Joining: the run's session agreed with every other rank (libnetagg.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "worker.h"

/*
 * Joining (see libnetagg.h). A join vector holds, for each tree, a copy of
 * JOIN_BITS elements a rank: the copy of tree t in the chunks that go to
 * tree t, so that every tree's node sees every rank. A rank's nonce is the
 * pattern of its elements set to join_one(); every other rank leaves them
 * 0. Whatever the job's type and operation, a sum of one rank's elements
 * and zeros is that rank's pattern, each set element the same value (1, or
 * 1 divided by the contributors for op avg; large for int32, so that an
 * average stays above 0): a pattern of two ranks at one place shows as a
 * pattern not the nonce, or as set elements of two values.
 */
#define JOIN_BITS	32

/* An element that is set, in the job's type, little endian. */
static void join_one(const struct netagg_worker *w, uint8_t *p)
{
	uint32_t v;

	switch (w->cfg.dtype) {
	case NETAGG_DTYPE_I32:
		v = 1U << 20;
		break;
	case NETAGG_DTYPE_F16:
		v = 0x3c00;	/* 1.0 */
		break;
	case NETAGG_DTYPE_BF16:
		v = 0x3f80;
		break;
	default:
		v = 0x3f800000;
		break;
	}
	for (unsigned int i = 0; i < w->esize; i++)
		p[i] = v >> (8 * i);
}

/* Chunks of a vector of @len elements a copy, in every tree: x epp. */
static size_t join_chunks(const struct netagg_worker *w, size_t len)
{
	return (len + w->epp - 1) / w->epp * w->cfg.ntrees;
}

/* The byte offset of element @pos of tree @t's copy. */
static size_t join_at(const struct netagg_worker *w, unsigned int t, size_t pos)
{
	size_t c = pos / w->epp * w->cfg.ntrees + t;

	return (c * w->epp + pos % w->epp) * w->esize;
}

static bool join_zero(const struct netagg_worker *w, const uint8_t *p)
{
	for (unsigned int i = 0; i < w->esize; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * An allreduce of a join vector, in round @round of each tree's session
 * (@sessions[t]; NULL: session 0, where runs meet).
 */
static int join_run(struct netagg_worker *w, uint8_t *vec, size_t count,
		    const uint32_t *sessions, uint16_t round)
{
	int err;

	for (unsigned int t = 0; t < w->cfg.ntrees; t++)
		w->ts[t].cur_session = sessions ? sessions[t] : 0;
	w->buf = vec;
	w->count = count;
	w->cur_round = round;
	w->joining = true;
	err = netagg_run(w);
	w->joining = false;
	w->buf = NULL;
	return err;
}

/* Whether tree @t's copy holds, at this rank's place, its nonce alone. */
static bool join_mine(const struct netagg_worker *w, const uint8_t *vec, unsigned int t,
		      uint32_t nonce)
{
	const uint8_t *set = NULL;

	for (unsigned int b = 0; b < JOIN_BITS; b++) {
		const uint8_t *p = vec + join_at(w, t, (size_t)w->cfg.rank * JOIN_BITS + b);

		if (!(nonce >> b & 1)) {
			if (!join_zero(w, p))
				return false;
		} else if (join_zero(w, p) || (set && memcmp(set, p, w->esize))) {
			return false;
		} else {
			set = p;
		}
	}
	return true;
}

/* FNV-1a, 32 bits, on from @h. */
static uint32_t join_hash(uint32_t h, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619U;
	return h;
}

/*
 * The session tree @t's copy of a join's sum names, met in round @meet:
 * never 0.
 */
static uint32_t join_session(const struct netagg_worker *w, const uint8_t *vec,
			     unsigned int t, uint16_t meet)
{
	uint32_t h = join_hash(2166136261U, (const uint8_t *)&meet, sizeof(meet));

	for (size_t pos = 0; pos < (size_t)w->cfg.workers * JOIN_BITS; pos++)
		h = join_hash(h, vec + join_at(w, t, pos), w->esize);
	return h ? h : 1;
}

/*
 * Ranks whose place is 0 in tree @t's copy of a confirmation vector: how
 * many, the lowest in *@first if it is lower.
 */
static unsigned int join_missing(const struct netagg_worker *w, const uint8_t *vec,
				 unsigned int t, unsigned int *first)
{
	unsigned int n = 0;

	for (unsigned int r = 0; r < w->cfg.workers; r++) {
		if (!join_zero(w, vec + join_at(w, t, r)))
			continue;
		if (!n++ && r < *first)
			*first = r;
	}
	return n;
}

/*
 * Agree the run's session with every other rank (libnetagg.h, "Joining"),
 * on each tree on its own: a node's rounds are its trees'. Each try: the
 * ranks allreduce their nonces in session 0, where runs meet, in round
 * cfg.session + cfg.round + try (so that runs given other numbers, or
 * started at other rounds, meet apart; an earlier run's kept sums met only
 * cost a try); each finds whether its nonce is there alone in each tree's
 * copy; each copy names a session, in which the ranks allreduce that
 * finding on that tree. Only a copy holding a fresh nonce names a session
 * no earlier run used, and only a rank whose fresh nonce is in it
 * confirms: so a confirmation of every rank means the copy is this run's
 * own, and the session it names the run's on that tree. A rank not
 * confirmed shows as 0 to all, and all try again. Each tree's copy is one
 * round of that tree alone: a copy answered whole from an earlier run's
 * kept sum is every rank's, so they all go on as one, and no rank late to
 * a round the tree left can start it again under the others.
 */
int netagg_agree_session(struct netagg_worker *w)
{
	unsigned int nt = w->cfg.ntrees, first = UINT_MAX, missing = 0;
	size_t vcount = join_chunks(w, (size_t)w->cfg.workers * JOIN_BITS) * w->epp;
	size_t ccount = join_chunks(w, w->cfg.workers) * w->epp;
	uint32_t sessions[NETAGG_TREES_MAX];
	uint8_t *vec, *conf, one[4];
	int err = -ENOTUNIQ;

	vec = malloc(vcount * w->esize);
	conf = malloc(ccount * w->esize);
	if (!vec || !conf) {
		err = -ENOMEM;
		goto out;
	}
	join_one(w, one);
	for (unsigned int a = 0; a < NETAGG_JOIN_TRIES; a++) {
		uint16_t meet = w->cfg.session + w->cfg.round + a;
		bool mine[NETAGG_TREES_MAX], all = true;
		uint32_t nonce = 0;

		while (!nonce)
			if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce)) {
				err = -errno;
				goto out;
			}
		memset(vec, 0, vcount * w->esize);
		for (unsigned int t = 0; t < nt; t++)
			for (unsigned int b = 0; b < JOIN_BITS; b++)
				if (nonce >> b & 1)
					memcpy(vec + join_at(w, t, (size_t)w->cfg.rank * JOIN_BITS + b),
					       one, w->esize);
		w->info.joins++;
		err = join_run(w, vec, vcount, NULL, meet);
		if (err)
			goto out;
		memset(conf, 0, ccount * w->esize);
		for (unsigned int t = 0; t < nt; t++) {
			mine[t] = join_mine(w, vec, t, nonce);
			sessions[t] = join_session(w, vec, t, meet);
			if (mine[t])
				memcpy(conf + join_at(w, t, w->cfg.rank), one, w->esize);
		}
		/* Round - 1: the run's rounds count from cfg.round in its sessions. */
		err = join_run(w, conf, ccount, sessions, (uint16_t)(w->cfg.round - 1));
		if (err)
			goto out;
		missing = 0;
		first = UINT_MAX;
		for (unsigned int t = 0; t < nt; t++) {
			unsigned int m = join_missing(w, conf, t, &first);

			if (m > missing)
				missing = m;
			all = all && mine[t] && !m;
		}
		if (all) {
			for (unsigned int t = 0; t < nt; t++)
				w->ts[t].session = sessions[t];
			w->joined = true;
			w->session_rounds = 0;
			goto out;
		}
		err = -ENOTUNIQ;
	}
	w->info.join_missing = missing ? missing : 1;
	w->info.join_missing_rank = missing ? first : w->cfg.rank;
out:
	free(vec);
	free(conf);
	return err;
}
