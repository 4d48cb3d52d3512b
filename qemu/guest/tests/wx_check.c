// SPDX-License-Identifier: GPL-2.0
/*
 * wx_check.c - the kernel's own W^X check (CONFIG_DEBUG_WX) as a KTAP case.
 *
 * With CONFIG_DEBUG_WX the kernel walks its page tables once at boot, after the built-in
 * KUnit suites (execmem's among them) have run, and prints "Checked W+X mappings: passed"
 * or a failure with the number of W+X pages. This program reads the kernel log and reports
 * that verdict; without the message (kernel built without DEBUG_WX) the case is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include "../ktap.h"

#define SYSLOG_ACTION_READ_ALL		3
#define SYSLOG_ACTION_SIZE_BUFFER	10

int main(void)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0), n;
	const char *line;
	char *buf;

	printf("KTAP version 1\n1..1\n");
	buf = size > 0 ? malloc(size + 1) : NULL;
	n = buf ? klogctl(SYSLOG_ACTION_READ_ALL, buf, size) : -1;
	if (n < 0) {
		result(0, "boot_wx_mappings", "cannot read the kernel log");
		return 1;
	}
	buf[n] = '\0';
	line = strstr(buf, "Checked W+X mappings: ");
	if (strstr(buf, "Found insecure W+X mapping")) {
		result(0, "boot_wx_mappings", "the kernel found an insecure W+X mapping");
	} else if (!line) {
		printf("ok 1 boot_wx_mappings # SKIP no W^X check in the log (CONFIG_DEBUG_WX off)\n");
	} else {
		line += strlen("Checked W+X mappings: ");
		result(!strncmp(line, "passed", 6), "boot_wx_mappings", "%.*s",
		       (int)strcspn(line, "\n"), line);
	}
	free(buf);
	return failures ? 1 : 0;
}
