// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP hook's commands: attach netagg's XDP program to a port, detach it,
 * show where it is. The program (xdp/netagg_xdp.bpf.c) is built into the
 * CLI (xdp.skel.h, made by bpftool) and loaded with libbpf; it stays on
 * the port after the CLI exits, as "ip link set dev DEV xdp" leaves one.
 * It calls the module's kfunc, so loading it needs the module loaded, with
 * its BTF: what is missing is said before libbpf would fail on it.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "cli.h"
#include "exitcode.h"
#include "output.h"
#include "parse.h"
#include "xdp.skel.h"

/* The program's name, as the kernel reports it: how ours is told apart. */
#define XDP_PROG_NAME "netagg_xdp"

/* libbpf's messages, kept to explain a failure: its last lines. */
static char libbpf_log[4096];

static int keep_libbpf_log(enum libbpf_print_level level, const char *fmt,
			   va_list ap)
{
	size_t used = strlen(libbpf_log);
	char line[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* Keep the end: the reason comes last. */
	if (used + strlen(line) >= sizeof(libbpf_log)) {
		memmove(libbpf_log, libbpf_log + used / 2, used - used / 2 + 1);
		used = strlen(libbpf_log);
	}
	snprintf(libbpf_log + used, sizeof(libbpf_log) - used, "%s", line);
	return 0;
}

static int xdp_error(const char *fmt, ...)
{
	va_list ap;

	netagg_line_prefix();
	fputs("Error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return NETAGG_EXIT_FAIL;
}

static unsigned int xdp_dev(const char *cmd, int argc, char **argv)
{
	unsigned int ifindex;

	if (argc < 1)
		netagg_usage_error("%s: missing DEV", cmd);
	if (strlen(argv[0]) >= IF_NAMESIZE)
		netagg_usage_error("%s: \"%s\" is not a device name", cmd, argv[0]);
	ifindex = if_nametoindex(argv[0]);
	if (!ifindex)
		netagg_usage_error("%s: no device \"%s\" in this namespace", cmd, argv[0]);
	return ifindex;
}

/* The XDP program on @ifindex in @mode (XDP_FLAGS_*_MODE): its id, or 0. */
static uint32_t xdp_prog_on(unsigned int ifindex, uint32_t mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	return mode == XDP_FLAGS_SKB_MODE ? q.skb_prog_id : q.drv_prog_id;
}

/* Whether program @id is netagg's. */
static bool xdp_prog_ours(uint32_t id)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	bool ours;
	int fd;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	ours = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       !strcmp(info.name, XDP_PROG_NAME);
	close(fd);
	return ours;
}

/* What loading the program needs, said plainly before libbpf trips on it. */
static int xdp_can_load(void)
{
	if (access("/sys/kernel/btf/vmlinux", F_OK))
		return xdp_error("this kernel has no BTF (CONFIG_DEBUG_INFO_BTF): "
				 "no XDP hook; the netfilter hook works without it");
	if (access("/sys/module/netagg", F_OK))
		return xdp_error("the netagg module is not loaded");
	if (access("/sys/kernel/btf/netagg", F_OK))
		return xdp_error("the netagg module has no BTF (built where the kernel's "
				 "BTF was missing: scripts/kbuild-btf): no XDP hook; "
				 "the netfilter hook works without it");
	return 0;
}

static uint32_t parse_mode(const char *cmd, int argc, char **argv)
{
	if (argc == 0)
		return XDP_FLAGS_DRV_MODE;
	if (strcmp(argv[0], "mode"))
		netagg_usage_error("%s: unknown argument \"%s\"", cmd, argv[0]);
	if (argc < 2)
		netagg_usage_error("%s: missing value after \"mode\"", cmd);
	if (argc > 2)
		netagg_usage_error("%s: unknown argument \"%s\"", cmd, argv[2]);
	if (!strcmp(argv[1], "native"))
		return XDP_FLAGS_DRV_MODE;
	if (!strcmp(argv[1], "generic"))
		return XDP_FLAGS_SKB_MODE;
	netagg_usage_error("%s: mode must be native or generic, not \"%s\"", cmd, argv[1]);
}

/* xdp attach DEV [mode native|generic] */
int netagg_cmd_xdp_attach(int argc, char **argv)
{
	unsigned int ifindex = xdp_dev("xdp attach", argc, argv);
	uint32_t mode = parse_mode("xdp attach", argc - 1, argv + 1), id;
	const char *dev = argv[0];
	struct netagg_xdp *skel;
	int err;

	id = xdp_prog_on(ifindex, mode);
	if (id && xdp_prog_ours(id))
		return NETAGG_EXIT_OK;
	if (id)
		return xdp_error("%s already has an XDP program (id %" PRIu32 "): "
				 "detach it first", dev, id);
	err = xdp_can_load();
	if (err)
		return err;
	libbpf_set_print(keep_libbpf_log);
	skel = netagg_xdp__open_and_load();
	if (!skel) {
		err = errno;
		return xdp_error("the kernel refused netagg's XDP program (%s):\n%s",
				 strerror(err), libbpf_log);
	}
	err = bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.netagg_xdp),
			     mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	netagg_xdp__destroy(skel);
	if (err == -EOPNOTSUPP && mode == XDP_FLAGS_DRV_MODE)
		return xdp_error("%s: its driver cannot run XDP natively "
				 "(mode generic runs it on the skb, which gains nothing "
				 "on the netfilter hook)", dev);
	if (err == -EBUSY || err == -EEXIST)
		return xdp_error("%s already has an XDP program in the other mode: "
				 "detach it first", dev);
	if (err)
		return xdp_error("%s: cannot attach: %s", dev, strerror(-err));
	return NETAGG_EXIT_OK;
}

/* xdp detach DEV: netagg's program, in whichever mode it is. */
int netagg_cmd_xdp_detach(int argc, char **argv)
{
	static const uint32_t modes[] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };
	unsigned int ifindex = xdp_dev("xdp detach", argc, argv), i;
	const char *dev = argv[0];
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	uint32_t id;
	int err, fd;

	if (argc > 1)
		netagg_usage_error("xdp detach: unknown argument \"%s\"", argv[1]);
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		id = xdp_prog_on(ifindex, modes[i]);
		if (!id || !xdp_prog_ours(id))
			continue;
		/* Only if it is still ours when the kernel takes it off. */
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		opts.old_prog_fd = fd;
		err = bpf_xdp_detach(ifindex, modes[i] | XDP_FLAGS_REPLACE, &opts);
		close(fd);
		if (err)
			return xdp_error("%s: cannot detach: %s", dev, strerror(-err));
		return NETAGG_EXIT_OK;
	}
	return xdp_error("%s: netagg's XDP program is not attached", dev);
}

/**
 * netagg_xdp_show() - Where netagg's XDP program is attached.
 *
 * Text: a line "xdp DEV mode native|generic prog ID" each; JSON: an array
 * "xdp" of {dev, mode, prog}. Devices of the namespace only.
 */
void netagg_xdp_show(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	uint32_t ids[2];
	unsigned int m;

	netagg_out_open("xdp", '[');
	for (i = ifs; i && i->if_index; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		if (bpf_xdp_query(i->if_index, 0, &q))
			continue;
		ids[0] = q.drv_prog_id;
		ids[1] = q.skb_prog_id;
		for (m = 0; m < 2; m++) {
			if (!ids[m] || !xdp_prog_ours(ids[m]))
				continue;
			netagg_out_open(NULL, '{');
			netagg_out_line(0);
			netagg_out_str("dev", "xdp", i->if_name);
			netagg_out_str("mode", "mode", m ? "generic" : "native");
			netagg_out_u64("prog", "prog", ids[m]);
			netagg_out_eol();
			netagg_out_close('}');
		}
	}
	netagg_out_close(']');
	if (ifs)
		if_freenameindex(ifs);
}

/* xdp show */
int netagg_cmd_xdp_show(int argc, char **argv)
{
	if (argc > 0)
		netagg_usage_error("xdp show: unknown argument \"%s\"", argv[0]);
	netagg_out_open(NULL, '{');
	netagg_xdp_show();
	netagg_out_close('}');
	return NETAGG_EXIT_OK;
}
