/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktap.h - KTAP case lines for the guest test programs of qemu/guest/tests: one
 * "ok N NAME" / "not ok N NAME" per case, with an optional "# NAME: why" line before it.
 */
#ifndef GUEST_KTAP_H
#define GUEST_KTAP_H

#include <stdarg.h>
#include <stdio.h>

static int casenum;	/* cases reported so far */
static int failures;	/* of those, "not ok" */

static void result(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Report case @name: "ok" if @ok; @fmt (printf format, may be NULL) explains it. */
static void result(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		printf("# %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	printf("%s %d %s\n", ok ? "ok" : "not ok", ++casenum, name);
	if (!ok)
		failures++;
	fflush(stdout);
}

#endif /* GUEST_KTAP_H */
