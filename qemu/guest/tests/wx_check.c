// SPDX-License-Identifier: GPL-2.0
/*
 * wx_check.c - no kernel mapping both writable and executable, as two KTAP cases:
 *
 *   boot_wx_mappings     the kernel's own W^X check (CONFIG_DEBUG_WX): it walks its page
 *                        tables once at boot, after the built-in KUnit suites (execmem's among
 *                        them) have run, and prints "Checked W+X mappings: passed" or a
 *                        failure; read from the kernel log. SKIP without the message.
 *   runtime_wx_mappings  the kernel page tables now, after the tests before this one in
 *                        tests.list (BPF programs, trampolines, the dispatcher loaded and
 *                        freed), from ptdump in debugfs (CONFIG_PTDUMP_DEBUGFS): no range both
 *                        writable (x86, arm64: "RW"; riscv: "W") and executable ("x"; "X").
 *                        SKIP without the ptdump file (arm64's guest is built without it:
 *                        on arm64 it stops vmalloc space from being PMD-mapped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/klog.h>
#include "../ktap.h"
#include "../ptdump.h"

#define SYSLOG_ACTION_READ_ALL		3
#define SYSLOG_ACTION_SIZE_BUFFER	10

static void runtime_wx(void)
{
	const char *path = ptdump_path();
	char first[512];
	long ranges, wx;

	if (!path) {
		printf("ok %d runtime_wx_mappings # SKIP no ptdump in debugfs (CONFIG_PTDUMP_DEBUGFS off)\n",
		       ++casenum);
		return;
	}
	wx = ptdump_wx(path, &ranges, first, sizeof(first));
	result(ranges > 0 && wx == 0, "runtime_wx_mappings",
	       "%s: %ld ranges, %ld writable and executable%s%s", path, ranges, wx,
	       wx ? "; first: " : "", first);
}

int main(void)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0), n;
	const char *line;
	char *buf;

	printf("KTAP version 1\n1..2\n");
	buf = size > 0 ? malloc(size + 1) : NULL;
	n = buf ? klogctl(SYSLOG_ACTION_READ_ALL, buf, size) : -1;
	if (n < 0) {
		result(0, "boot_wx_mappings", "cannot read the kernel log");
		runtime_wx();
		return 1;
	}
	buf[n] = '\0';
	line = strstr(buf, "Checked W+X mappings: ");
	if (strstr(buf, "Found insecure W+X mapping")) {
		result(0, "boot_wx_mappings", "the kernel found an insecure W+X mapping");
	} else if (!line) {
		printf("ok %d boot_wx_mappings # SKIP no W^X check in the log (CONFIG_DEBUG_WX off)\n",
		       ++casenum);
	} else {
		line += strlen("Checked W+X mappings: ");
		result(!strncmp(line, "passed", 6), "boot_wx_mappings", "%.*s",
		       (int)strcspn(line, "\n"), line);
	}
	free(buf);
	runtime_wx();
	return failures ? 1 : 0;
}
