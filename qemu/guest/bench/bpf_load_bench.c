// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_load_bench.c - the cost of loading and unloading BPF programs and of the text they
 * leave mapped, run in the guest by scripts/bench-bpf-load.sh on the base and on the tip.
 *
 * One socket filter stays loaded throughout (the warm-up: a system always has some BPF
 * text). Then, once idle and once with a memory hog running (a child process that keeps
 * mapping, touching and unmapping 64 MiB: page faults, page-table and TLB churn):
 *
 *   load     1,000 socket filters with the fleet's size mix (half below 500 bytes of code,
 *            a quarter 500 B - 2 kB, a quarter 2 - 16 kB), timed; then the BPF text is
 *            measured (below) with all of them loaded
 *   unload   close() of the 1,000, timed, then the time until their text is freed (the
 *            kernel frees it after an RCU grace period, from a work item; -1 where it cannot
 *            be seen: the base's bpf_prog_pack on x86 keeps its 2 MiB packs)
 *   cycle    200 load+close cycles of one 300-byte program, with the TLB-flush IPIs
 *            (x86 /proc/interrupts "TLB") and direct-map splits (/proc/vmstat
 *            direct_map_level2/3_splits) they cost; -1 where the kernel has no such count
 *
 * BPF text: where the JIT uses execmem (/sys/kernel/debug/execmem; bpf_prog_pack_alloc not
 * in /proc/kallsyms), bytes mapped and the PMD/PTE entries mapping them from that file;
 * else the pages of the vmalloc areas the JIT allocated (/proc/vmallocinfo, callers
 * bpf_jit_binary_alloc, bpf_jit_alloc_exec, alloc_new_pack, bpf_prog_pack_alloc), which
 * 6.1 maps with one PTE per page. Output: KTAP, one line per measurement:
 *
 *   # bench: load=MODE progs=N load_ms=A unload_ms=U freed_ms=F bytes_mapped=B pmd=P pte=T
 *   # bench: cycle=MODE n=N cycle_ms=C tlb_ipis=I splits=S
 *
 * A case fails only if a load or the test run fails; the numbers are never judged here.
 *
 * With the argument "count" (bench.list's bpf_load_count, run by scripts/bench-bpf-ops.sh)
 * it times nothing: it counts the calls of the functions named by its argument
 * "funcs=F1,F2,..." (the arch file's COUNT_FUNCTIONS, passed on the kernel command line as
 * bpf_load_bench.funcs=...): permission changes, kernel TLB flushes, vmap purges, calls on
 * other CPUs, text patching, the operations whose cost on hardware execmem removes. It uses
 * the kernel's function profiler (set_ftrace_filter, function_profile_enabled, the per-CPU
 * trace_stat/functionN summed), which patches those functions to count them: hence runs of
 * their own, apart from the timing. Each phase is counted alone, between a read of the
 * counts right after the profiler is switched on and one right before it is switched off:
 *
 *   load      1,000 socket filters of the fleet's size mix loaded (after the warm-up)
 *   unload    those 1,000 closed, until their text is freed (as in the timing above)
 *   attach    100 fentry programs attached, one link each, to 100 kernel functions
 *             (fentry_pick.h), where the kernel has ftrace direct calls (x86_64; the
 *             other arches have no such phase and three cases in all)
 *   detach    those 100 links closed, until the trampolines' text is freed
 *   dispatch  50 BPF_PROG_TEST_RUNs of an XDP program with repeat=2: each puts the program
 *             into the XDP dispatcher and takes it out again, 100 dispatcher updates
 *
 * Output: one case per phase, and for each phase and function
 *
 *   # bench: count=PHASE n=N fn=FUNCTION calls=C
 *
 * C is -1 for a function set_ftrace_filter does not take on this kernel (not there,
 * inlined, or not traceable); a comment line says which.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include "fentry_pick.h"
#include "../ktap.h"

#define NPROGS		1000
#define NCYCLES		200
#define MAX_ADDS	4000	/* instructions of the largest programs: 16 kB of code */
#define HOG_BYTES	(64UL << 20)
#define NTRAMPS		100	/* fentry links of the attach and detach phases */
#define NDISPATCH	50	/* XDP test runs, two dispatcher updates each */
#define MAXFUNCS	64	/* functions counted */
#define PROFILE_NAME_MAX 30	/* trace_stat/functionN: "%-30.30s" */

static int fds[NPROGS];
static int use_execmem;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sum of the per-CPU counts of the "TLB:" row of /proc/interrupts (x86), or -1. */
static long long tlb_ipis(void)
{
	char line[1024], *p, *end;
	long long sum = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (sum < 0 && fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "TLB:", 4))
			continue;
		sum = 0;
		for (p += 4; ; p = end) {
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			sum += v;
		}
	}
	fclose(f);
	return sum;
}

/* Direct-map splits so far (x86 /proc/vmstat), or -1. */
static long long splits(void)
{
	long long l2 = file_stat("/proc/vmstat", "direct_map_level2_splits");
	long long l3 = file_stat("/proc/vmstat", "direct_map_level3_splits");

	return l2 < 0 ? -1 : l2 + (l3 > 0 ? l3 : 0);
}

/* Pages of the JIT's vmalloc areas (the base's BPF text), from /proc/vmallocinfo. */
static long long jit_vmalloc_pages(long long *areas)
{
	static const char *const callers[] = { "bpf_jit_binary_alloc", "bpf_jit_alloc_exec",
					       "alloc_new_pack", "bpf_prog_pack_alloc" };
	char line[512], *p;
	long long pages = 0;
	FILE *f = fopen("/proc/vmallocinfo", "r");
	unsigned int i;

	*areas = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(callers) / sizeof(callers[0]); i++)
			if (strstr(line, callers[i]))
				break;
		p = strstr(line, " pages=");
		if (i == sizeof(callers) / sizeof(callers[0]) || !p)
			continue;
		pages += atoll(p + 7);
		(*areas)++;
	}
	fclose(f);
	return pages;
}

/* A count that drops as the JIT's text is freed: execmem allocations or vmalloc areas. */
static long long text_objects(void)
{
	long long areas;

	if (use_execmem)
		return file_stat(EXECMEM_STATS, "allocations");
	jit_vmalloc_pages(&areas);
	return areas;
}

/* Wait up to 30 s for text_objects() to drop to @want; ms waited, or -1 if it did not. */
static double wait_freed(long long want)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	double t0 = now_ms();

	while (text_objects() > want) {
		if (now_ms() - t0 > 30000)
			return -1;
		nanosleep(&ts, NULL);
	}
	return now_ms() - t0;
}

/*
 * Wait (up to 30 s) until text_objects() holds still for 500 ms: the frees that earlier
 * close()s queued must be done before a phase counts its own. Returns the settled count.
 */
static long long settled_objects(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	long long last = text_objects(), cur;
	double t0 = now_ms(), still = now_ms();

	while (now_ms() - still < 500 && now_ms() - t0 < 30000) {
		nanosleep(&ts, NULL);
		cur = text_objects();
		if (cur != last) {
			last = cur;
			still = now_ms();
		}
	}
	return last;
}

static void load_unload(const char *mode)
{
	long long before = settled_objects(), loaded, bytes = -1, pmd = -1, pte = -1, areas;
	double t0, load_ms, unload_ms, freed_ms = -1;
	int i, n = 0, err = 0;
	char name[32];

	snprintf(name, sizeof(name), "load_%s", mode);
	t0 = now_ms();
	for (i = 0; i < NPROGS && !err; i++) {
		fds[i] = load_sized_filter(i, fleet_adds(i, MAX_ADDS));
		if (fds[i] < 0)
			err = -fds[i];
		else
			n++;
	}
	load_ms = now_ms() - t0;
	loaded = text_objects();
	if (use_execmem) {
		bytes = file_stat(EXECMEM_STATS, "bytes_mapped");
		pmd = file_stat(EXECMEM_STATS, "pmd_entries");
		pte = file_stat(EXECMEM_STATS, "pte_entries");
	} else {
		pte = jit_vmalloc_pages(&areas);
		bytes = pte * sysconf(_SC_PAGESIZE);
		pmd = 0;
	}
	t0 = now_ms();
	for (i = 0; i < n; i++)
		close(fds[i]);
	unload_ms = now_ms() - t0;
	/* Visible only with an object per program (not in the base's x86 bpf_prog_pack). */
	if (loaded - before >= n) {
		freed_ms = wait_freed(before);
		if (freed_ms < 0)
			printf("# %s: text not freed within 30 s (%lld objects, %lld before load)\n",
			       mode, text_objects(), before);
	} else {
		printf("# %s: freed after: not measurable (%lld objects added for %d programs)\n",
		       mode, loaded - before, n);
	}
	if (err) {
		result(0, name, "program %d: %s", n, strerror(err));
		return;
	}
	printf("# bench: load=%s progs=%d load_ms=%.1f unload_ms=%.1f freed_ms=%.1f bytes_mapped=%lld pmd=%lld pte=%lld\n",
	       mode, n, load_ms, unload_ms, freed_ms, bytes, pmd, pte);
	result(1, name, NULL);
}

static void cycles(const char *mode)
{
	long long ipi0 = tlb_ipis(), split0 = splits(), ipi1, split1;
	double t0 = now_ms(), ms;
	char name[32];
	int i, fd;

	snprintf(name, sizeof(name), "cycle_%s", mode);
	for (i = 0; i < NCYCLES; i++) {
		fd = load_sized_filter(i, 70);
		if (fd < 0) {
			result(0, name, "load %d: %s", i, strerror(-fd));
			return;
		}
		close(fd);
	}
	ms = now_ms() - t0;
	ipi1 = tlb_ipis();
	split1 = splits();
	printf("# bench: cycle=%s n=%d cycle_ms=%.1f tlb_ipis=%lld splits=%lld\n", mode, NCYCLES,
	       ms, ipi0 < 0 ? -1 : ipi1 - ipi0, split0 < 0 ? -1 : split1 - split0);
	result(1, name, NULL);
}

/* The memory hog: map, touch and unmap HOG_BYTES until killed. */
static pid_t start_hog(void)
{
	pid_t pid = fork();
	size_t off;
	char *p;

	if (pid)
		return pid;
	for (;;) {
		p = mmap(NULL, HOG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		for (off = 0; off < HOG_BYTES; off += 4096)
			p[off] = 1;
		munmap(p, HOG_BYTES);
	}
}


/* The functions counted (funcs=...), whether set_ftrace_filter took each, and counts. */
static char *funcs[MAXFUNCS];
static int nfuncs, traced[MAXFUNCS], ntraced;

/*
 * Put the names of the comma-separated @list into funcs[] and set_ftrace_filter, each in a
 * write of its own ending in a newline (tracefs parses a name when its line ends; a name it
 * cannot take fails that write alone), then read the filter back: a function counts only if
 * the filter lists it. Returns how many it lists; 0 leaves the filter empty, which would
 * have the profiler count every function, so the caller then counts nothing.
 */
static int profile_filter(char *list)
{
	char *tok, *save, line[256], *filter;
	int i;

	if (write_text(TRACING_DIR "/set_ftrace_filter", ""))
		return 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (nfuncs == MAXFUNCS) {
			printf("# count: more than %d functions: %s and those after it not counted\n",
			       MAXFUNCS, tok);
			break;
		}
		funcs[nfuncs++] = tok;
	}
	for (i = 0; i < nfuncs; i++) {
		snprintf(line, sizeof(line), "%s\n", funcs[i]);
		write_text_flags(TRACING_DIR "/set_ftrace_filter", line, O_APPEND);
	}
	filter = text_read(TRACING_DIR "/set_ftrace_filter");
	for (i = 0; i < nfuncs; i++) {
		traced[i] = filter && ftrace_list_has(filter, funcs[i]);
		ntraced += traced[i];
		if (!traced[i])
			printf("# count: %s: not in set_ftrace_filter on this kernel (absent, inlined or not traceable)\n",
			       funcs[i]);
	}
	free(filter);
	return ntraced;
}

/*
 * Whether the profiler's @name is function @func: the profiler prints at most
 * PROFILE_NAME_MAX characters of a name.
 */
static int profile_name_is(const char *name, const char *func)
{
	size_t len = strlen(func);

	if (len > PROFILE_NAME_MAX)
		len = PROFILE_NAME_MAX;
	return strlen(name) == len && !strncmp(name, func, len);
}

/*
 * The profiler's hits of each function of funcs[] into @calls, summed over the per-CPU
 * files trace_stat/function0, 1, ... (a function the profiler lists twice, same-named
 * static functions, counts twice). 0, or -ENOENT if there is no such file.
 */
static int profile_read(long long *calls)
{
	char path[96], line[512], name[256];
	long long hits;
	int cpu, i;
	FILE *f;

	memset(calls, 0, sizeof(*calls) * MAXFUNCS);
	for (cpu = 0; ; cpu++) {
		snprintf(path, sizeof(path), TRACING_DIR "/trace_stat/function%d", cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		/* "  NAME  HITS  TIME ...": the two header lines do not scan */
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%255s %lld", name, &hits) == 2)
				for (i = 0; i < nfuncs; i++)
					if (profile_name_is(name, funcs[i]))
						calls[i] += hits;
		fclose(f);
	}
	return cpu ? 0 : -ENOENT;
}

static long long calls0[MAXFUNCS];

/* Switch the profiler on (which resets its counts) and read where they start: 0 or -errno. */
static int profile_start(void)
{
	int err = write_text(TRACING_DIR "/function_profile_enabled", "1");

	return err ? err : profile_read(calls0);
}

/*
 * Read the counts again, switch the profiler off and print one bench line per function for
 * @phase of @n operations. 0, or -errno if the counts cannot be read.
 */
static int profile_stop(const char *phase, int n)
{
	long long calls1[MAXFUNCS];
	int err = profile_read(calls1), i;

	write_text(TRACING_DIR "/function_profile_enabled", "0");
	if (err)
		return err;
	for (i = 0; i < nfuncs; i++)
		printf("# bench: count=%s n=%d fn=%s calls=%lld\n", phase, n, funcs[i],
		       traced[i] ? calls1[i] - calls0[i] : -1);
	return 0;
}

/* Count the load and the unload of the fleet's NPROGS programs. */
static void count_load_unload(void)
{
	long long before = settled_objects();
	int i, n = 0, err;

	err = profile_start();
	for (i = 0; i < NPROGS && !err; i++) {
		fds[i] = load_sized_filter(i, fleet_adds(i, MAX_ADDS));
		if (fds[i] < 0)
			err = fds[i];
		else
			n++;
	}
	if (!err)
		err = profile_stop("load", n);
	else
		write_text(TRACING_DIR "/function_profile_enabled", "0");
	result(!err, "count_load", err ? "after %d programs: %s" : NULL, n, strerror(-err));
	err = profile_start();
	for (i = 0; i < n; i++)
		close(fds[i]);
	/* the text of closed programs is freed after an RCU grace period, by a work item */
	if (!err && text_objects() > before && wait_freed(before) < 0)
		printf("# count_unload: text not freed within 30 s\n");
	settled_objects();
	if (!err)
		err = profile_stop("unload", n);
	result(!err, "count_unload", err ? "%s" : NULL, strerror(-err));
}

/* Count NTRAMPS fentry links attached and then detached, one at a time. */
static void count_trampolines(void)
{
	static uint32_t cand[4 * NTRAMPS];
	static char log[16384];
	int progs[NTRAMPS], links[NTRAMPS], ncand, np = 0, nl = 0, map, i, err = 0;
	long long before;

	map = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint64_t), 1);
	ncand = pick_funcs(BPF_TRACE_FENTRY, cand, 4 * NTRAMPS);
	for (i = 0; i < ncand && np < NTRAMPS && map >= 0; i++) {
		int fd = fentry_load(BPF_TRACE_FENTRY, cand[i], map, 0, log, sizeof(log));

		if (fd >= 0)
			progs[np++] = fd;
	}
	if (np < NTRAMPS) {
		result(0, "count_attach", "only %d of %d fentry programs load (%d candidates)",
		       np, NTRAMPS, ncand);
		result(0, "count_detach", "not run");
		goto out;
	}
	before = settled_objects();
	err = profile_start();
	for (i = 0; i < NTRAMPS && !err; i++) {
		links[i] = fentry_attach(progs[i], BPF_TRACE_FENTRY);
		if (links[i] < 0)
			err = links[i];
		else
			nl++;
	}
	if (!err)
		err = profile_stop("attach", nl);
	else
		write_text(TRACING_DIR "/function_profile_enabled", "0");
	result(!err, "count_attach", err ? "after %d links: %s" : NULL, nl, strerror(-err));
	err = profile_start();
	for (i = 0; i < nl; i++)
		close(links[i]);
	if (!err && text_objects() > before && wait_freed(before) < 0)
		printf("# count_detach: trampolines not freed within 30 s\n");
	settled_objects();
	if (!err)
		err = profile_stop("detach", nl);
	result(!err, "count_detach", err ? "%s" : NULL, strerror(-err));
out:
	for (i = 0; i < np; i++)
		close(progs[i]);
	if (map >= 0)
		close(map);
}

/* Count NDISPATCH XDP test runs with repeat=2: two XDP dispatcher updates each. */
static void count_dispatcher(void)
{
	const struct bpf_insn pass[] = { MOV64_IMM(0, XDP_PASS), EXIT() };
	static char log[4096];
	uint32_t ret;
	int fd = prog_load_type(BPF_PROG_TYPE_XDP, pass, 2, log, sizeof(log));
	int i, done = 0, err = fd < 0 ? fd : 0;

	/* the text the earlier phases freed goes after an RCU grace period: not counted here */
	settled_objects();
	if (!err)
		err = profile_start();
	for (i = 0; i < NDISPATCH && !err; i++) {
		err = pkt_test_run(fd, 2, &ret, NULL);
		done += !err;
	}
	if (!err)
		err = profile_stop("dispatch", 2 * NDISPATCH);
	else
		write_text(TRACING_DIR "/function_profile_enabled", "0");
	result(!err, "count_dispatch", err ? "after %d test runs: %s" : NULL, done,
	       strerror(-err));
	if (fd >= 0)
		close(fd);
}

/* The count mode (see the top): "count funcs=F1,F2,...", after the warm-up program @warm. */
static int count_main(int argc, char **argv, int warm)
{
	char *list = NULL;
	/* Without ftrace direct calls (6.1: all but x86_64) there are no trampolines to count. */
	int i, tramps = kallsyms_has("register_ftrace_direct_multi");

	for (i = 2; i < argc; i++)
		if (!strncmp(argv[i], "funcs=", 6))
			list = argv[i] + 6;
	printf("KTAP version 1\n1..%d\n# bench: text=%s\n", tramps ? 5 : 3,
	       use_execmem ? "execmem" : "vmalloc");
	if (!tramps)
		printf("# count: no ftrace direct calls on this arch in 6.1: no attach and detach phases\n");
	if (warm < 0) {
		printf("# warm-up program: %s\n", strerror(-warm));
		return 1;
	}
	if (!list || !profile_filter(list)) {
		printf("# count: no function to count (funcs=%s)\n", list ? list : "not given");
		return 1;
	}
	count_load_unload();
	if (tramps)
		count_trampolines();
	count_dispatcher();
	write_text(TRACING_DIR "/set_ftrace_filter", "");
	close(warm);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int warm = load_sized_filter(-1, 70);
	pid_t hog;

	use_execmem = !kallsyms_has("bpf_prog_pack_alloc") &&
		      file_stat(EXECMEM_STATS, "allocations") >= 0;
	if (argc > 1 && !strcmp(argv[1], "count"))
		return count_main(argc, argv, warm);
	printf("KTAP version 1\n1..4\n");
	printf("# bench: text=%s\n", use_execmem ? "execmem" : "vmalloc");
	/* No PMU under TCG (and none assumed): iTLB misses are left to a real machine. */
	printf("# iTLB misses not counted here; on hardware with a PMU run: perf stat -e iTLB-load-misses,iTLB-loads -a -- ./bpf_load_bench\n");
	if (warm < 0) {
		printf("# warm-up program: %s\n", strerror(-warm));
		return 1;
	}
	load_unload("idle");
	cycles("idle");
	hog = start_hog();
	if (hog < 0) {
		printf("# fork: %s\n", strerror(errno));
		return 1;
	}
	load_unload("loaded");
	cycles("loaded");
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	close(warm);
	return failures ? 1 : 0;
}
