// SPDX-License-Identifier: GPL-2.0
/*
 * "netagg stats format prometheus": the namespace's, jobs' and trees'
 * counters in Prometheus' text exposition format (0.0.4), as
 * node_exporter's textfile collector reads it. A family is one counter of
 * one level, named by Prometheus' conventions: netagg_ns_seen_total,
 * netagg_job_rx_total{job="7"}, netagg_tree_aggregated_total{job="7",
 * tree="0"}. A level's drops are one family, labelled by reason
 * (netagg_tree_drop_total{job="7",tree="0",reason="nomem"}), so that one
 * rule watches them all. HELP says what the spec says of each counter.
 *
 * The format wants a family's samples together, after its HELP and TYPE
 * lines, where the replies come a job at a time: they are gathered first,
 * then written a family at a time.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exitcode.h"
#include "output.h"

enum level { LEVEL_NS, LEVEL_JOB, LEVEL_TREE, LEVELS };

static const char *const level_names[LEVELS] = { "ns", "job", "tree" };

struct sample {
	uint64_t value;
	uint32_t job;
	uint16_t tree;
	uint16_t stat;
	uint8_t level;
};

/* What the replies gave, and which job was asked for. */
struct netagg_prom {
	struct netagg_job_filter filter;
	struct sample *samples;
	size_t n, size;
	bool nomem;
};

static void add(struct netagg_prom *p, enum level level, uint32_t job,
		uint16_t tree, const struct nlattr *stats)
{
	const struct nlattr *a;
	int rem;

	if (!stats)
		return;
	nla_for_each_nested(a, stats, rem) {
		if (p->n == p->size) {
			size_t size = p->size ? 2 * p->size : 256;
			struct sample *s = realloc(p->samples, size * sizeof(*s));

			if (!s) {
				p->nomem = true;
				return;
			}
			p->samples = s;
			p->size = size;
		}
		p->samples[p->n++] = (struct sample) {
			.value = netagg_attr_uint(a), .job = job, .tree = tree,
			.stat = nla_type(a), .level = level,
		};
	}
}

static void prom_ns(struct nlattr **tb, struct nlattr *attrs, int len, void *arg)
{
	(void)attrs, (void)len;
	add(arg, LEVEL_NS, 0, 0, tb[NETAGG_A_STATS]);
}

static void prom_job(struct nlattr **tb, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *a, *ttb[NETAGG_A_MAX + 1];
	struct netagg_prom *p = arg;
	uint32_t job;
	int rem;

	if (!tb[NETAGG_A_JOB_ID])
		return;
	job = nla_get_u32(tb[NETAGG_A_JOB_ID]);
	if (p->filter.on && job != p->filter.jid)
		return;
	p->filter.found = true;
	add(p, LEVEL_JOB, job, 0, tb[NETAGG_A_STATS]);
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) != NETAGG_A_TREE ||
		    nla_parse_nested(ttb, NETAGG_A_MAX, a, netagg_reply_policy) < 0 ||
		    !ttb[NETAGG_A_TREE_ID])
			continue;
		add(p, LEVEL_TREE, job, nla_get_u16(ttb[NETAGG_A_TREE_ID]),
		    ttb[NETAGG_A_STATS]);
	}
}

/* NETAGG_STAT_* @stat's reason if it is a drop (its name in @buf), else NULL. */
static const char *drop_reason(unsigned int stat, char buf[16])
{
	return netagg_drop_reason(netagg_stat_name(stat, buf, 16));
}

static bool is_drop(unsigned int stat)
{
	char buf[16];

	return drop_reason(stat, buf);
}

/* HELP text: the exposition format escapes backslashes and newlines. */
static void help_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static const char *stat_help(unsigned int stat)
{
	if (stat <= NETAGG_STAT_MAX && netagg_stat_info[stat].help)
		return netagg_stat_info[stat].help;
	return "A counter this netagg does not know (a newer module's).";
}

static void sample_line(FILE *f, const char *family, const struct sample *s)
{
	char buf[16];
	const char *reason = drop_reason(s->stat, buf);

	fprintf(f, "%s", family);
	if (s->level != LEVEL_NS) {
		fprintf(f, "{job=\"%" PRIu32 "\"", s->job);
		if (s->level == LEVEL_TREE)
			fprintf(f, ",tree=\"%u\"", s->tree);
		if (reason)
			fprintf(f, ",reason=\"%s\"", reason);
		fputc('}', f);
	}
	fprintf(f, " %" PRIu64 "\n", s->value);
}

/* Every counter of @level but its drops, a family each. */
static void write_counters(FILE *f, const struct netagg_prom *p, enum level level)
{
	bool seen[1 << 14] = { false };	/* the families written (nla_type() is 14 bits) */
	char family[64], buf[16];
	const char *name;
	size_t i, j;

	for (i = 0; i < p->n; i++) {
		const struct sample *s = &p->samples[i];

		if (s->level != level || is_drop(s->stat) || seen[s->stat])
			continue;
		seen[s->stat] = true;
		name = netagg_stat_name(s->stat, buf, sizeof(buf));
		if (level == LEVEL_NS && !strncmp(name, "ns_", 3))
			name += 3;
		snprintf(family, sizeof(family), "netagg_%s_%s_total",
			 level_names[level], name);
		fprintf(f, "# HELP %s ", family);
		help_text(f, stat_help(s->stat));
		fprintf(f, "\n# TYPE %s counter\n", family);
		for (j = i; j < p->n; j++)
			if (p->samples[j].level == level && p->samples[j].stat == s->stat)
				sample_line(f, family, &p->samples[j]);
	}
}

/* @level's drops: one family, a reason each (its counter's name). */
static void write_drops(FILE *f, const struct netagg_prom *p, enum level level)
{
	bool any = false, listed[NETAGG_STAT_MAX + 1] = { false };
	char family[32], buf[16];
	size_t i;

	snprintf(family, sizeof(family), "netagg_%s_drop_total", level_names[level]);
	for (i = 0; i < p->n; i++) {
		const struct sample *s = &p->samples[i];

		if (s->level != level || !is_drop(s->stat))
			continue;
		if (!any)
			fprintf(f, "# HELP %s Packets dropped, by reason:", family);
		any = true;
		if (s->stat <= NETAGG_STAT_MAX && !listed[s->stat]) {
			listed[s->stat] = true;
			fprintf(f, " %s: ", drop_reason(s->stat, buf));
			help_text(f, stat_help(s->stat));
		}
	}
	if (!any)
		return;
	fprintf(f, "\n# TYPE %s counter\n", family);
	for (i = 0; i < p->n; i++)
		if (p->samples[i].level == level && is_drop(p->samples[i].stat))
			sample_line(f, family, &p->samples[i]);
}

int netagg_prom_stats(bool one_job, uint32_t jid)
{
	struct netagg_prom p = { .filter = { .on = one_job, .jid = jid } };
	FILE *f = netagg_out_file();
	int rc, level;

	rc = netagg_transact(netagg_request(NETAGG_CMD_NS_GET, NLM_F_ACK), prom_ns, &p);
	if (!rc)
		rc = netagg_transact(netagg_request(NETAGG_CMD_STATS_GET, NLM_F_DUMP),
				     prom_job, &p);
	if (!rc && p.nomem) {
		netagg_line_prefix();
		fprintf(stderr, "Error: out of memory for the counters\n");
		rc = NETAGG_EXIT_FAIL;
	}
	if (!rc && one_job && !p.filter.found) {
		netagg_line_prefix();
		fprintf(stderr, "Error: job %" PRIu32 " not found\n", jid);
		rc = NETAGG_EXIT_FAIL;
	}
	if (!rc)
		for (level = 0; level < LEVELS; level++) {
			write_counters(f, &p, level);
			write_drops(f, &p, level);
		}
	free(p.samples);
	return rc;
}
