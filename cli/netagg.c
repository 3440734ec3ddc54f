// SPDX-License-Identifier: GPL-2.0
/*
 * netagg - configure and inspect in-network gradient aggregation through
 * the "netagg" generic netlink family (see uapi/linux/netagg.h).
 *
 * Exit codes (exitcode.h): 0 success, 1 error from the kernel (or no
 * kernel module), 2 usage error. The whole command line is parsed before
 * the netlink socket is opened, so usage errors never depend on the module.
 *
 * Options are ip's: one dash or two, a long name shortened to any unique
 * prefix (getopt_long_only()); -n NETNS runs it in a named namespace.
 *
 * Batch mode (-b FILE, like "ip -batch") runs one command per line of FILE
 * over one netlink socket: each line is parsed, then sent, before the next
 * is read. Errors then name the line ("netagg: line N: ..."); the first
 * failing line ends the batch with its exit code, unless -force is given:
 * then every line runs and the exit code is that of the first failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "exitcode.h"
#include "output.h"
#include "parse.h"

/* The output's form, from the options. */
static bool json, pretty;

/* The output of the command being run, in memory until it succeeded. */
static char *out_buf;
static size_t out_len;

/* Run one command, argv being OBJECT COMMAND [ARGS], and print its output
 * if it succeeded. Returns an exit code.
 */
static int run_cmd(int argc, char **argv)
{
	netagg_cmd_fn run;
	FILE *out;
	int words, rc;

	run = netagg_find_cmd(argc, argv, &words);

	out = open_memstream(&out_buf, &out_len);
	if (!out) {
		perror("netagg");
		return NETAGG_EXIT_FAIL;
	}
	/* Afresh: a failed command may have left containers open. */
	netagg_out_init(out, json, pretty);
	rc = run(argc - words, argv + words);
	netagg_out_init(NULL, json, pretty);
	fclose(out);
	if (rc == NETAGG_EXIT_OK && out_len) {
		fwrite(out_buf, 1, out_len, stdout);
		fflush(stdout);	/* batch: in order with later errors */
	}
	free(out_buf);
	out_buf = NULL;
	return rc;
}

/* Batch mode: run one line's command. A usage error, which exits when it
 * comes from the command line, comes back here instead (report.c), from
 * however deep in the parsers it was found: that keeps the parsers as they
 * are, reporting and giving up in one call. All it can leave behind is
 * the open output stream and a request not yet sent, both in globals.
 */
static int run_line(int argc, char **argv)
{
	jmp_buf env;
	int rc;

	if (setjmp(env)) {
		netagg_report_jump(NULL);
		if (netagg_out_file()) {
			fclose(netagg_out_file());
			netagg_out_init(NULL, json, pretty);
			free(out_buf);
			out_buf = NULL;
		}
		netagg_request_drop();
		return NETAGG_EXIT_USAGE;
	}
	netagg_report_jump(&env);
	rc = run_cmd(argc, argv);
	netagg_report_jump(NULL);
	return rc;
}

/* The longest tree command with 64 children takes 136 words. */
#define BATCH_MAX_WORDS 256

/* Run every command of the file (path "-": stdin) over one socket. */
static int run_batch(const char *path, bool force)
{
	static const char blanks[] = " \t\r\n\v\f";
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL, *words[BATCH_MAX_WORDS], *w, *save;
	unsigned long lineno = 0;
	size_t size = 0;
	int n, r, rc = NETAGG_EXIT_OK;

	if (!f)
		netagg_usage_error("cannot open \"%s\": %s", path, strerror(errno));
	while (getline(&line, &size, f) != -1) {
		netagg_report_line(++lineno);
		line[strcspn(line, "#")] = '\0';	/* a comment */
		n = 0;
		for (w = strtok_r(line, blanks, &save);
		     w && n < BATCH_MAX_WORDS;
		     w = strtok_r(NULL, blanks, &save))
			words[n++] = w;
		if (w) {
			netagg_line_prefix();
			fprintf(stderr, "more than %d words\n", BATCH_MAX_WORDS);
			r = NETAGG_EXIT_USAGE;
		} else if (n == 0) {
			continue;	/* blank or only a comment */
		} else {
			r = run_line(n, words);
		}
		if (r != NETAGG_EXIT_OK) {
			if (rc == NETAGG_EXIT_OK)
				rc = r;
			if (!force)
				break;
		}
	}
	netagg_report_line(0);
	if (ferror(f)) {
		fprintf(stderr, "netagg: cannot read \"%s\": %s\n", path,
			strerror(errno));
		if (rc == NETAGG_EXIT_OK)
			rc = NETAGG_EXIT_USAGE;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

/*
 * -n NETNS: move into the network namespace "ip netns" named NETNS, as
 * "ip -n" does, before the netlink socket is opened.
 */
static void enter_netns(const char *name)
{
	char path[sizeof("/run/netns/") + NAME_MAX];
	int fd;

	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > NAME_MAX)
		netagg_usage_error("invalid network namespace name \"%s\"", name);
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			netagg_usage_error("no network namespace \"%s\" (ip netns list)", name);
		fprintf(stderr, "netagg: cannot open network namespace \"%s\": %s\n",
			name, strerror(errno));
		exit(NETAGG_EXIT_FAIL);
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "netagg: cannot enter network namespace \"%s\": %s\n",
			name, strerror(errno));
		exit(NETAGG_EXIT_FAIL);
	}
	close(fd);
}

/*
 * Whether @word is one dash and a name (not a letter): a long option, or a
 * prefix of one, which @word must then be: as in ip, short options do not
 * combine ("-jp" is no option, where getopt would read -j -p).
 */
static bool long_word(const char *word)
{
	return word[0] == '-' && word[1] && word[1] != '-' && word[2];
}

static bool long_prefix(const char *word, const struct option *opts)
{
	for (; opts->name; opts++)
		if (!strncmp(opts->name, word + 1, strlen(word + 1)))
			return true;
	return false;
}

/* An option getopt_long_only() did not take, named as it was given. */
static void bad_option(char **argv, int opt)
{
	const char *word = argv[optind - 1];

	if (long_word(word)) {
		if (opt == ':')
			netagg_usage_error("option \"%s\" needs a value", word);
		netagg_usage_error("unknown option \"%s\" (see -help)", word);
	}
	netagg_bad_option(argv, opt);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "batch", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "netns", required_argument, NULL, 'n' },
		{ "details", no_argument, NULL, 'd' },
		{ "timestamp", no_argument, NULL, 't' },
		{ "tshort", no_argument, NULL, 'T' },
		{ "Version", no_argument, NULL, 'V' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *batch = NULL, *netns = NULL;
	bool force = false;
	int opt, rc;

	opterr = 0;	/* our own message, in our format */
	for (;;) {
		if (optind < argc && long_word(argv[optind]) &&
		    !long_prefix(argv[optind], opts))
			netagg_usage_error("unknown option \"%s\" (see -help)",
					   argv[optind]);
		opt = getopt_long_only(argc, argv, "+:jpdthVb:n:", opts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'p':
			json = pretty = true;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'n':
			netns = optarg;
			break;
		case 'd':
			netagg_details = true;
			break;
		case 't':
			netagg_timestamps = NETAGG_TIMESTAMP_LONG;
			break;
		case 'T':
			netagg_timestamps = NETAGG_TIMESTAMP_SHORT;
			break;
		case 'h':
			netagg_usage(stdout);
			return NETAGG_EXIT_OK;
		case 'V':
			puts("netagg " NETAGG_VERSION);
			return NETAGG_EXIT_OK;
		default:
			bad_option(argv, opt);
		}
	}
	argc -= optind;
	argv += optind;
	if (netns)
		enter_netns(netns);
	if (batch) {
		if (argc > 0)
			netagg_usage_error("-b FILE takes no command: \"%s\"", argv[0]);
		rc = run_batch(batch, force);
	} else if (force) {
		netagg_usage_error("-force only applies to batch mode (-b FILE)");
	} else if (argc == 0) {
		netagg_usage(stderr);
		return NETAGG_EXIT_USAGE;
	} else {
		rc = run_cmd(argc, argv);
	}
	netagg_nl_close();
	return rc;
}

