// SPDX-License-Identifier: GPL-2.0
/* Text or JSON output for every netagg program: see output.h. */
#include <inttypes.h>
#include <stdlib.h>

#include "output.h"

static FILE *out;
static bool json, pretty;
static bool bol = true;		/* text: nothing printed on this line yet */
static int jdepth;		/* JSON: open containers */
static bool jempty[16];		/* JSON: container at that depth is empty */

void netagg_out_init(FILE *f, bool as_json, bool indent)
{
	out = f;
	json = as_json || indent;
	pretty = indent;
	bol = true;
	jdepth = 0;
}

FILE *netagg_out_file(void)
{
	return out;
}

FILE *netagg_out_swap(FILE *f)
{
	FILE *old = out;

	out = f;
	return old;
}

bool netagg_out_json(void)
{
	return json;
}

static void j_newline(void)
{
	if (pretty) {
		fputc('\n', out);
		for (int i = 0; i < jdepth; i++)
			fputs("    ", out);
	}
}

static void j_string(const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* Start a JSON value: comma, indentation and, inside an object, the key. */
static void j_value(const char *key)
{
	if (jdepth > 0) {
		if (!jempty[jdepth])
			fputc(',', out);
		jempty[jdepth] = false;
		j_newline();
	}
	if (key) {
		j_string(key);
		fputs(pretty ? ": " : ":", out);
	}
}

/* Text fields are "name value", separated by one space. */
static void t_field(const char *name)
{
	fprintf(out, "%s%s ", bol ? "" : " ", name);
	bol = false;
}

static void field(const char *key, const char *name)
{
	if (json)
		j_value(key);
	else
		t_field(name);
}

void netagg_out_open(const char *key, char bracket)
{
	if (!json)
		return;
	if (jdepth + 1 >= (int)(sizeof(jempty) / sizeof(jempty[0])))
		abort();	/* the nesting of our output is fixed and small */
	j_value(key);
	fputc(bracket, out);
	jempty[++jdepth] = true;
}

void netagg_out_close(char bracket)
{
	if (!json)
		return;
	jdepth--;
	if (!jempty[jdepth + 1])
		j_newline();
	fputc(bracket, out);
	if (jdepth == 0)
		fputc('\n', out);
}

void netagg_out_line(int tabs)
{
	if (json)
		return;
	while (tabs--)
		fputc('\t', out);
	bol = true;
}

void netagg_out_eol(void)
{
	if (json)
		return;
	fputc('\n', out);
	bol = true;
}

void netagg_out_text(const char *s)
{
	if (json)
		return;
	fputs(s, out);
	bol = false;
}

void netagg_out_u64(const char *key, const char *name, uint64_t v)
{
	field(key, name);
	fprintf(out, "%" PRIu64, v);
}

void netagg_out_hex(const char *key, const char *name, uint64_t v)
{
	field(key, name);
	fprintf(out, json ? "%" PRIu64 : "0x%" PRIx64, v);
}

void netagg_out_double(const char *key, const char *name, double v,
		       int decimals)
{
	field(key, name);
	fprintf(out, "%.*f", decimals, v);
}

void netagg_out_bool(const char *key, const char *name, bool v)
{
	field(key, name);
	fputs(json ? (v ? "true" : "false") : (v ? "yes" : "no"), out);
}

void netagg_out_str(const char *key, const char *name, const char *s)
{
	field(key, name);
	if (!s)
		fputs(json ? "null" : "-", out);
	else if (json)
		j_string(s);
	else
		fputs(s, out);
}
