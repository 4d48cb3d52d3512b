/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptdump.h - W+X ranges of the kernel page tables, from ptdump in debugfs
 * (CONFIG_PTDUMP_DEBUGFS), for the guest test programs of qemu/guest/tests.
 */
#ifndef GUEST_PTDUMP_H
#define GUEST_PTDUMP_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Where the ptdump file is (x86; arm64 and riscv), or NULL without one. */
static inline const char *ptdump_path(void)
{
	static const char *const files[] = {
		"/sys/kernel/debug/page_tables/kernel",
		"/sys/kernel/debug/kernel_page_tables",
	};
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!access(files[i], R_OK))
			return files[i];
	return NULL;
}

/* Whether the ptdump line @line maps its range writable ("RW", "W") and executable. */
static inline int ptdump_line_is_wx(const char *line)
{
	char copy[512], *tok, *save;
	int w = 0, x = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		w |= !strcmp(tok, "RW") || !strcmp(tok, "W");
		x |= !strcmp(tok, "x") || !strcmp(tok, "X");
	}
	return w && x;
}

/*
 * Scan ptdump file @path: the number of ranges it lists (0 if it cannot be read) into
 * *@ranges, the first W+X line (without its newline) into @first (@len bytes); the number
 * of W+X ranges.
 */
static inline long ptdump_wx(const char *path, long *ranges, char *first, size_t len)
{
	char line[512];
	long wx = 0;
	FILE *f = fopen(path, "r");

	*ranges = 0;
	first[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0x", 2))
			continue;
		(*ranges)++;
		if (ptdump_line_is_wx(line) && !wx++)
			snprintf(first, len, "%.*s", (int)strcspn(line, "\n"), line);
	}
	if (f)
		fclose(f);
	return wx;
}

#endif /* GUEST_PTDUMP_H */
