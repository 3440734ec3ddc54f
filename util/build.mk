# SPDX-License-Identifier: GPL-2.0
#
# What every userspace Makefile of netagg includes (lib/, cli/, tools/,
# man/, tests/tools/), so that they build alike: the compiler and its
# flags, the project's version, the uapi headers, where the installed
# files go, and util/'s objects, which the programs share: the value
# parsers (parse.c), the text and JSON output layer (output.c) and the
# kernel's error messages (extack.c). The includer sets ROOT, the
# checkout's top, relative to the working directory (every path is, so
# "make -C DIR" and "make -f DIR/Makefile" both work).

UTIL := $(ROOT)util/
CC ?= cc
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
# The project's version (VERSION: the module's, the programs' and the
# Python package's), which the programs print for -V.
NETAGG_VERSION := $(shell cat $(ROOT)VERSION)
# Appended after CFLAGS so that a caller's CFLAGS cannot drop them. Headers
# come from the folder itself, core/ (the portable cores), util/ and uapi/.
NETAGG_CFLAGS := -Wall -Wextra -Werror -std=gnu11 -I$(ROOT)uapi -I$(ROOT)core \
		 -I$(UTIL) -DNETAGG_VERSION='"$(NETAGG_VERSION)"'
UAPI := $(addprefix $(ROOT)uapi/linux/,netagg.h netagg_nl.h)

# Recursive (=) on purpose: "make clean" must not need pkg-config or libnl.
NL_CFLAGS = $(shell $(PKG_CONFIG) --cflags libnl-genl-3.0)
NL_LIBS = $(shell $(PKG_CONFIG) --libs libnl-genl-3.0)

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
MANDIR ?= $(PREFIX)/share/man

UTIL_OBJS := $(UTIL)parse.o $(UTIL)output.o
UTIL_HDRS := $(addprefix $(UTIL),parse.h output.h exitcode.h mark.h extack.h)

# extack.c needs libnl's headers; the others nothing but libc's.
$(UTIL)extack.o: NETAGG_CFLAGS += $(NL_CFLAGS)
$(UTIL)%.o: $(UTIL)%.c $(UTIL_HDRS) $(UAPI)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(NETAGG_CFLAGS) -c -o $@ $<
