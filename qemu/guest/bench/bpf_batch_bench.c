// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_batch_bench.c - fentry attach and detach cost, one link per program against one
 * BPF_TRACE_BATCH link, run in the guest by scripts/bench-batch.sh.
 *
 * For N = 1, 16, 64, 256: N fentry programs on N distinct kernel functions that the idle
 * guest does not call (tcp_* functions with at most 5 arguments, from the vmlinux BTF,
 * patchable by ftrace), loaded untimed, then
 *
 *   single   N BPF_LINK_CREATE calls, then N close()s
 *   batch    one BPF_LINK_CREATE with BPF_TRACE_BATCH, then one close() (only on a kernel
 *            with the series: bpf_tracing_batch_link_attach in /proc/kallsyms)
 *
 * each timed with CLOCK_MONOTONIC around the attach and the detach, with the trampoline
 * counters of /sys/kernel/debug/bpf_trampoline (ftrace updates and ftrace unregistrations,
 * each unregistration waiting for RCU-tasks grace periods) read before and after when the
 * kernel has them. Output: KTAP, one machine-readable line per measurement:
 *
 *   # bench: MODE n=N attach_ms=A detach_ms=D updates=U unregs=R
 *
 * (U and R are -1 without the counters). A case fails only if an attach or detach fails;
 * the numbers are never judged here.
 */
#define _GNU_SOURCE
#include "../fentry_raw.h"
#include <time.h>

#define MAXN	256
#define MAXCAND	1024	/* candidate functions; those fentry cannot attach to are skipped */
#define STATS	"/sys/kernel/debug/bpf_trampoline"

static const int sizes[] = { 1, 16, 64, 256 };
static char verifier_log[65536];
static int casenum, failures;
static uint32_t btf_ids[MAXCAND];
static int nfuncs;

static void result(int ok, const char *name)
{
	printf("%s %d %s\n", ok ? "ok" : "not ok", ++casenum, name);
	if (!ok)
		failures++;
	fflush(stdout);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The two counters of STATS, or -1 each when the kernel has no such file. */
static void stats(long long *updates, long long *unregs)
{
	FILE *f = fopen(STATS, "r");
	char key[64];
	long long v;

	*updates = *unregs = -1;
	if (!f)
		return;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, "ftrace_updates"))
			*updates = v;
		else if (!strcmp(key, "ftrace_unregisters"))
			*unregs = v;
	}
	fclose(f);
}

/* Up to MAXCAND tcp_ functions with BTF, at most 5 arguments, that ftrace can patch. */
static int pick_funcs(void)
{
	char *avail = tracing_read("available_filter_functions");
	struct btf_funcs bf;
	uint32_t i;

	if (!avail || btf_funcs_load(&bf)) {
		printf("# cannot read the vmlinux BTF or available_filter_functions\n");
		return -1;
	}
	for (i = 0; i < bf.nfuncs && nfuncs < MAXCAND; i++) {
		const char *name = bf.strs + bf.names[i];

		if (!strncmp(name, "tcp_", 4) && bf.nargs[i] <= 5 && ftrace_list_has(avail, name))
			btf_ids[nfuncs++] = bf.ids[i];
	}
	free(avail);
	return 0;
}

/* Time one mode for @n programs in @progs; prints the bench line. Returns 1 on success. */
static int run_mode(const char *mode, const uint32_t *progs, int n)
{
	long long up0, un0, up1, un1;
	int links[MAXN], i, ok = 1, nlinks = 0;
	double t0, t1, t2;
	uint32_t idx;

	stats(&up0, &un0);
	t0 = now_ms();
	if (!strcmp(mode, "batch")) {
		links[0] = batch_attach(progs, n, 0, &idx);
		nlinks = links[0] >= 0;
	} else {
		for (i = 0; i < n; i++) {
			links[i] = fentry_attach(progs[i], BPF_TRACE_FENTRY);
			if (links[i] < 0)
				break;
			nlinks++;
		}
	}
	t1 = now_ms();
	if (nlinks == 0 || (strcmp(mode, "batch") && nlinks < n)) {
		printf("# %s n=%d: attach failed: %s\n", mode, n,
		       strerror(-links[nlinks]));
		ok = 0;
	}
	for (i = 0; i < nlinks; i++)
		close(links[i]);
	t2 = now_ms();
	stats(&up1, &un1);
	if (ok)
		printf("# bench: %s n=%d attach_ms=%.1f detach_ms=%.1f updates=%lld unregs=%lld\n",
		       mode, n, t1 - t0, t2 - t1, up0 < 0 ? -1 : up1 - up0,
		       un0 < 0 ? -1 : un1 - un0);
	return ok;
}

int main(void)
{
	int batch = kallsyms_has("bpf_tracing_batch_link_attach");
	int map, s, i, ncases = 0;
	char name[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	if (!kallsyms_has("register_ftrace_direct_multi")) {
		printf("1..1\nok 1 batch_bench # SKIP no ftrace direct calls on this arch in 6.1\n");
		return 0;
	}
	map = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint64_t), 1);
	if (map < 0 || pick_funcs()) {
		printf("1..1\nnot ok 1 setup # cannot read the BTF or ftrace lists, or create a map\n");
		return 1;
	}
	for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++)
		ncases += batch ? 2 : 1;
	printf("1..%d\n# %d candidate tcp_ functions; batch links: %s\n", ncases, nfuncs,
	       batch ? "yes" : "no (kernel without the series)");
	for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
		uint32_t progs[MAXN];
		int n = sizes[s], loaded = 0, ok, skipped = 0;

		/* The first n candidates that take an fentry program (BTF types it supports). */
		for (i = 0; i < nfuncs && loaded < n; i++) {
			int fd = fentry_load(BPF_TRACE_FENTRY, btf_ids[i], map, 0, verifier_log,
					     sizeof(verifier_log));

			if (fd < 0)
				skipped++;
			else
				progs[loaded++] = fd;
		}
		ok = loaded == n;
		if (!ok)
			printf("# only %d of %d candidates take an fentry program\n", loaded, n);
		else if (skipped)
			printf("# n=%d: skipped %d candidates the verifier refuses\n", n, skipped);
		snprintf(name, sizeof(name), "single_n%d", n);
		result(ok && run_mode("single", progs, n), name);
		if (batch) {
			snprintf(name, sizeof(name), "batch_n%d", n);
			result(ok && run_mode("batch", progs, n), name);
		}
		for (i = 0; i < loaded; i++)
			close(progs[i]);
	}
	return failures ? 1 : 0;
}
