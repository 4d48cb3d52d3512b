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
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include "../bpf_raw.h"
#include "../ktap.h"

#define NPROGS		1000
#define NCYCLES		200
#define MAX_ADDS	4000	/* instructions of the largest programs: 16 kB of code */
#define HOG_BYTES	(64UL << 20)

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

int main(void)
{
	int warm = load_sized_filter(-1, 70);
	pid_t hog;

	printf("KTAP version 1\n1..4\n");
	use_execmem = !kallsyms_has("bpf_prog_pack_alloc") &&
		      file_stat(EXECMEM_STATS, "allocations") >= 0;
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
