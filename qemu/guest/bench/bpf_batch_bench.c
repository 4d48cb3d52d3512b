// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_batch_bench.c - fentry, fexit and fmod_ret attach and detach cost, one link per
 * program against one BPF_TRACE_BATCH link, run in the guest by scripts/bench-batch.sh.
 *
 * For each program type, N programs on N distinct kernel functions (with BTF, at most 5
 * arguments, patchable by ftrace): for fentry and fexit networking functions the idle guest
 * does not call (tcp_ first, then udp, inet, ip, sock), for fmod_ret the functions of the
 * error-injection list (the only ones BPF_MODIFY_RETURN may attach to besides LSM hooks;
 * its programs return 0, so every function runs as it would). The programs are loaded
 * untimed, once per type; then, RUNS times for each N:
 *
 *   single   N BPF_LINK_CREATE calls, then N close()s  (N = 1, 16, 64, 256)
 *   batch    one BPF_LINK_CREATE with BPF_TRACE_BATCH, then one close()  (N = 1, 16, 64,
 *            256, 1024; only on a kernel with the series:
 *            bpf_tracing_batch_link_attach in /proc/kallsyms)
 *
 * each timed with CLOCK_MONOTONIC around the attach and the detach, with the trampoline
 * counters of /sys/kernel/debug/bpf_trampoline (ftrace updates and ftrace unregistrations,
 * each unregistration waiting for RCU-tasks grace periods) read before and after when the
 * kernel has them. Output: KTAP, one case per type, mode and N that the kernel has enough
 * functions for (a comment names the others), and one machine-readable line per
 * measurement:
 *
 *   # bench: MODE type=TYPE n=N run=R attach_ms=A detach_ms=D updates=U unregs=R
 *
 * (U and R are -1 without the counters). A case fails only if an attach or detach fails;
 * the numbers are never judged here.
 */
#define _GNU_SOURCE
#include "fentry_pick.h"
#include <sys/resource.h>
#include <time.h>

#define RUNS	5
#define MAXN	TRACE_BATCH_MAX_CNT
#define MAXSINGLE 256	/* the largest N attached one link at a time */
#define MAXCAND	4096	/* candidate functions; those the verifier refuses are skipped */
#define STATS	"/sys/kernel/debug/bpf_trampoline"

static const int sizes[] = { 1, 16, 64, 256, 1024 };
static const struct {
	const char *name;
	enum bpf_attach_type type;
} types[] = {
	{ "fentry", BPF_TRACE_FENTRY },
	{ "fexit", BPF_TRACE_FEXIT },
	{ "fmod_ret", BPF_MODIFY_RETURN },
};

static char verifier_log[65536];
static int casenum, failures;

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

/*
 * Time one run of one mode for @n programs in @progs; prints the bench line. Returns 1 on
 * success.
 */
static int run_mode(const char *mode, const char *tname, enum bpf_attach_type type,
		    const uint32_t *progs, int n, int run)
{
	static int links[MAXN];
	long long up0, un0, up1, un1;
	int i, ok = 1, nlinks = 0, err = 0;
	double t0, t1, t2;
	uint32_t idx;

	stats(&up0, &un0);
	t0 = now_ms();
	if (!strcmp(mode, "batch")) {
		links[0] = batch_attach(progs, n, 0, &idx);
		if (links[0] >= 0)
			nlinks = 1;
		else
			err = links[0];
	} else {
		for (i = 0; i < n; i++) {
			links[i] = fentry_attach(progs[i], type);
			if (links[i] < 0) {
				err = links[i];
				break;
			}
			nlinks++;
		}
	}
	t1 = now_ms();
	if (err) {
		printf("# %s %s n=%d: attach failed after %d link(s): %s\n", mode, tname, n,
		       nlinks, strerror(-err));
		ok = 0;
	}
	for (i = 0; i < nlinks; i++)
		close(links[i]);
	t2 = now_ms();
	stats(&up1, &un1);
	if (ok)
		printf("# bench: %s type=%s n=%d run=%d attach_ms=%.1f detach_ms=%.1f updates=%lld unregs=%lld\n",
		       mode, tname, n, run, t1 - t0, t2 - t1, up0 < 0 ? -1 : up1 - up0,
		       un0 < 0 ? -1 : un1 - un0);
	return ok;
}

int main(void)
{
	enum { NTYPES = sizeof(types) / sizeof(types[0]) };
	static uint32_t cand[MAXCAND], progs[NTYPES][MAXN];
	int batch = kallsyms_has("bpf_tracing_batch_link_attach");
	int nsizes = sizeof(sizes) / sizeof(sizes[0]);
	int map, s, t, m, i, r, ncases = 0, loaded[NTYPES];
	struct rlimit rl;
	char name[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	if (!kallsyms_has("register_ftrace_direct_multi")) {
		printf("1..1\nok 1 batch_bench # SKIP no ftrace direct calls on this arch in 6.1\n");
		return 0;
	}
	/* Up to 1,024 programs of each type and their links: more than 1,024 descriptors. */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	map = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint64_t), 1);
	if (map < 0) {
		printf("1..1\nnot ok 1 setup # cannot create a map: %s\n", strerror(errno));
		return 1;
	}
	/*
	 * All programs first, untimed: the plan has the cases this kernel has functions for
	 * (fmod_ret attaches to the error-injection list only, a few hundred functions).
	 */
	for (t = 0; t < NTYPES; t++) {
		int want = batch ? MAXN : MAXSINGLE;
		int ncand = pick_funcs(types[t].type, cand, MAXCAND), skipped = 0;

		loaded[t] = 0;
		/* The first candidates that take a program of this type (BTF types it supports). */
		for (i = 0; i < ncand && loaded[t] < want; i++) {
			int fd = fentry_load(types[t].type, cand[i], map, 0, verifier_log,
					     sizeof(verifier_log));

			if (fd < 0)
				skipped++;
			else
				progs[t][loaded[t]++] = fd;
		}
		printf("# %s: %d candidate functions, %d programs loaded, %d refused by the verifier\n",
		       types[t].name, ncand, loaded[t], skipped);
		for (s = 0; s < nsizes; s++)
			for (m = 0; m < 2; m++)
				if ((m ? batch : sizes[s] <= MAXSINGLE) && loaded[t] >= sizes[s])
					ncases++;
				else if (m ? batch : sizes[s] <= MAXSINGLE)
					printf("# %s %s n=%d not run: only %d %s programs load on this kernel\n",
					       types[t].name, m ? "batch" : "single", sizes[s],
					       loaded[t], types[t].name);
	}
	printf("1..%d\n# %d runs each; batch links: %s; RLIMIT_NOFILE %llu\n", ncases, RUNS,
	       batch ? "yes" : "no (kernel without the series)",
	       (unsigned long long)rl.rlim_cur);
	for (t = 0; t < NTYPES; t++) {
		for (s = 0; s < nsizes; s++) {
			int n = sizes[s];

			for (m = 0; m < 2; m++) {
				const char *mode = m ? "batch" : "single";
				int ok = 1;

				if ((m && !batch) || (!m && n > MAXSINGLE) || loaded[t] < n)
					continue;
				snprintf(name, sizeof(name), "%s_%s_n%d", types[t].name, mode, n);
				for (r = 1; r <= RUNS && ok; r++)
					ok = run_mode(mode, types[t].name, types[t].type, progs[t], n, r);
				result(ok, name);
			}
		}
		for (i = 0; i < loaded[t]; i++)
			close(progs[t][i]);
	}
	return failures ? 1 : 0;
}
