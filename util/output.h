/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The output layer of every netagg program that prints a report: one set of
 * calls renders it as text or as JSON. In text, fields are "name value"
 * pairs on lines the caller starts and ends; in JSON, they are members
 * named by key of the objects and arrays the caller opens and closes, one
 * line per top-level value (or indented, pretty). Each call takes both
 * names and ignores the one the other form uses; calls meant for one form
 * only (open and close: JSON; line, eol and text: text) do nothing in the
 * other.
 */
#ifndef NETAGG_OUTPUT_H
#define NETAGG_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Write to @f from now on; @pretty implies @json. */
void netagg_out_init(FILE *f, bool json, bool pretty);
FILE *netagg_out_file(void);
/* Write to @f from now on, in the same form; returns the previous file. */
FILE *netagg_out_swap(FILE *f);
bool netagg_out_json(void);

/* JSON: open an object ('{') or an array ('['); @key is NULL in arrays. */
void netagg_out_open(const char *key, char bracket);
void netagg_out_close(char bracket);

/* Text: start a line indented by @tabs, end it, print literal text. */
void netagg_out_line(int tabs);
void netagg_out_eol(void);
void netagg_out_text(const char *s);

void netagg_out_u64(const char *key, const char *name, uint64_t v);
/* Hexadecimal in text (bitmaps), a number in JSON. */
void netagg_out_hex(const char *key, const char *name, uint64_t v);
/* @decimals digits after the point. */
void netagg_out_double(const char *key, const char *name, double v,
		       int decimals);
/* JSON true or false, "yes" or "no" in text. */
void netagg_out_bool(const char *key, const char *name, bool v);
/* @s NULL is JSON null, "-" in text. */
void netagg_out_str(const char *key, const char *name, const char *s);

#endif /* NETAGG_OUTPUT_H */
