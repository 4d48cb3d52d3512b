// SPDX-License-Identifier: GPL-2.0
/*
 * kmemleak_check.c - the kernel's memory leak detector (CONFIG_DEBUG_KMEMLEAK) as a KTAP
 * case, run after the other tests.
 *
 * Asks kmemleak for two scans through /sys/kernel/debug/kmemleak ("scan" is synchronous),
 * so that an object that was unreferenced only while a pointer to it sat in a register is
 * not counted, then reads the file: every "unreferenced object" it lists is a suspected
 * leak, and the case fails with the first report's lines as diagnostics. kmemleak prints
 * its own "new suspected memory leaks" line at KERN_INFO, below the harness's console
 * level, so without this case a leak would go unseen. Without the file (kernel built
 * without DEBUG_KMEMLEAK) the case is skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "../ktap.h"

#define KMEMLEAK	"/sys/kernel/debug/kmemleak"
#define SHOW_LINES	12	/* diagnostic lines of the first report */

/* Write "scan" to the kmemleak file: 0, or -errno. */
static int scan(void)
{
	FILE *f = fopen(KMEMLEAK, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs("scan", f) < 0)
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int main(void)
{
	char line[512];
	int leaks = 0, shown = 0, err, i;
	FILE *f;

	printf("KTAP version 1\n1..1\n");
	if (access(KMEMLEAK, F_OK)) {
		printf("ok 1 kmemleak_scan # SKIP no %s (CONFIG_DEBUG_KMEMLEAK off)\n", KMEMLEAK);
		return 0;
	}
	for (i = 0; i < 2; i++) {
		err = scan();
		if (err) {
			result(0, "kmemleak_scan", "scan %d refused: %s (kmemleak disabled itself?)",
			       i + 1, strerror(-err));
			return 1;
		}
		if (!i)
			sleep(1);
	}
	f = fopen(KMEMLEAK, "r");
	if (!f) {
		result(0, "kmemleak_scan", "cannot read %s: %s", KMEMLEAK, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "unreferenced object"))
			leaks++;
		if (leaks == 1 && shown < SHOW_LINES) {
			printf("# %s", line);
			shown++;
		}
	}
	fclose(f);
	result(!leaks, "kmemleak_scan", "%d suspected leak(s) after two scans", leaks);
	return failures ? 1 : 0;
}
