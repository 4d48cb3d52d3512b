// SPDX-License-Identifier: GPL-2.0
/*
 * execmem_faults.c - execmem when its memory or its architecture hooks fail, made to fail
 * with the kernel's fault injection (Documentation/fault-injection/fault-injection.rst),
 * limited to this process (task-filter, /proc/self/make-it-fail).
 *
 * Cases (KTAP on stdout):
 *   pte_fallback         with every allocation of a 2 MiB block failing (fail_page_alloc,
 *                        min-order of a chunk), load 64 kB programs until execmem makes a
 *                        chunk: it is mapped by PTEs from scattered pages, pmd_fallbacks
 *                        counts it, every program returns the right value, no execmem entry
 *                        is writable and (ptdump, where the guest has it) no kernel mapping
 *                        is writable and executable. Closing the programs frees the chunk.
 *                        Making and freeing the chunk costs a bounded number of TLB-flushing
 *                        direct-map changes, counted with the function profiler: making it
 *                        calls FLUSH_FUNC at least once and at most FLUSH_MAX times, and so
 *                        does freeing it (at least FREED_MIN times), where one call per page
 *                        (512 per chunk) is what this case exists to catch. Uniprocessor
 *                        riscv64 flushes inline: the count is not checked there. SKIP
 *                        where execmem maps no chunk with a PMD (arm64 with PTDUMP_DEBUGFS).
 *   protect_alias_fails  with execmem_protect_alias() failing (fail_function, -ENOMEM), the
 *                        load that needs a new chunk fails (the JIT has no image: ENOTSUPP
 *                        with the JIT always on), and no chunk or mapped byte is added; once
 *                        the fault is gone the same program loads, into a new chunk, and
 *                        runs.
 *   text_copy_fails      with execmem_text_copy() failing (-EFAULT), BPF_PROG_TEST_RUN of a
 *                        struct_ops program, whose trampoline text is copied into execmem,
 *                        fails with EFAULT and leaves no execmem allocation behind (the
 *                        trampoline's is freed); once the fault is gone it returns the right
 *                        value. SKIP on riscv64 (6.1 has no BPF trampolines there). The
 *                        JITs' own copy is not failed here:
 *                        they warn when it fails (as upstream's do), which the harness
 *                        counts as a splat.
 *
 * Kernels whose execmem hooks cannot fail (no such function in
 * /sys/kernel/debug/fail_function/injectable) fail protect_alias_fails and text_copy_fails.
 * All cases are skipped on a kernel without execmem (/sys/kernel/debug/execmem) or without
 * the fault injection they use; the guest configurations have it (qemu/config/common.config).
 */
#include <fcntl.h>
#include "../bpf_raw.h"
#include "../fentry_raw.h"
#include "../ktap.h"
#include "../ptdump.h"

#define DEBUGFS		"/sys/kernel/debug"
#define FAIL_PAGE	DEBUGFS "/fail_page_alloc"
#define FAIL_FUNC	DEBUGFS "/fail_function"
#define CHUNK_SIZE	(2 * 1024 * 1024)
#define PROG_ADDS	16000	/* about 64 kB of JIT-ed code: 32 fill a chunk */
#define MAX_PROGS	128	/* two chunks' worth: the new chunk comes before the last */
#define FLUSH_MAX	16	/* flushing calls allowed to make, and to free, one chunk */

/*
 * The function each TLB-flushing direct-map change calls once: x86's change_page_attr
 * calls vm_unmap_aliases() (and flushes all CPUs); riscv's page attribute changes end in
 * flush_tlb_all(); arm64's execmem alias hook calls vm_unmap_aliases() once it has
 * protected a chunk's pages, as set_memory_ro() does (its flushes are inline, and making
 * the alias writable again calls nothing countable: FREED_MIN 0).
 */
#if defined(__x86_64__)
#define FLUSH_FUNC	"vm_unmap_aliases"
#define FREED_MIN	1
#elif defined(__riscv)
#define FLUSH_FUNC	"flush_tlb_all"
#define FREED_MIN	1
#else
#define FLUSH_FUNC	"vm_unmap_aliases"
#define FREED_MIN	0
#endif

static char logbuf[65536];

/*
 * Set the fault_attr files common to fail_page_alloc and fail_function under @dir to fail
 * every call this process makes (@on), or none (the kernel's defaults back); 0 or -errno of
 * the first write that failed.
 */
static int fault_attr(const char *dir, int on)
{
	static const char *const files[][2] = {
		{ "interval", "1" }, { "times", "-1" }, { "space", "0" },
		{ "verbose", "0" }, { "task-filter", "Y" },
	};
	static const char *const defaults[][2] = {
		{ "interval", "1" }, { "times", "1" }, { "space", "0" },
		{ "verbose", "2" }, { "task-filter", "N" },
	};
	char path[256];
	unsigned int i;
	int err = 0, e;

	/* Switching off tries every write, and puts back the kernel's defaults. */
	if (!on) {
		snprintf(path, sizeof(path), "%s/probability", dir);
		err = write_text(path, "0");
		e = write_text("/proc/self/make-it-fail", "0");
		err = err ? err : e;
		for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, defaults[i][0]);
			e = write_text(path, defaults[i][1]);
			err = err ? err : e;
		}
		return err;
	}
	for (i = 0; !err && i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		err = write_text(path, files[i][1]);
	}
	snprintf(path, sizeof(path), "%s/probability", dir);
	if (!err)
		err = write_text(path, "100");
	if (!err)
		err = write_text("/proc/self/make-it-fail", "1");
	return err;
}

/* Make every allocation of @order or more pages in this process fail (@on) or not. */
static int fail_blocks(int order, int on)
{
	char val[16];
	int err = 0;

	if (!on) {
		/* The kernel's defaults: min-order 1, both ignores on. */
		err = fault_attr(FAIL_PAGE, 0);
		write_text(FAIL_PAGE "/min-order", "1");
		write_text(FAIL_PAGE "/ignore-gfp-wait", "Y");
		write_text(FAIL_PAGE "/ignore-gfp-highmem", "Y");
		return err;
	}
	snprintf(val, sizeof(val), "%d", order);
	err = write_text(FAIL_PAGE "/min-order", val);
	if (!err)
		err = write_text(FAIL_PAGE "/ignore-gfp-wait", "N");
	if (!err)
		err = write_text(FAIL_PAGE "/ignore-gfp-highmem", "N");
	return err ? err : fault_attr(FAIL_PAGE, 1);
}

/*
 * Make function @func fail with @retval in this process (fail_function), or with @retval 0
 * stop that; 0 or -errno (-EINVAL if the kernel cannot inject @func).
 */
static int fail_func(const char *func, int retval)
{
	char path[256], val[24];
	int err;

	/* Off, or on for @func alone: an earlier entry would be armed too. */
	err = fault_attr(FAIL_FUNC, 0);
	err = write_text(FAIL_FUNC "/inject", "") ?: err;
	if (!retval)
		return err;
	err = write_text(FAIL_FUNC "/inject", func);
	snprintf(path, sizeof(path), FAIL_FUNC "/%s/retval", func);
	/* retval is read as an unsigned 64-bit number: -ENOMEM as 0xff...f4 */
	snprintf(val, sizeof(val), "%#lx", (unsigned long)(long)retval);
	if (!err)
		err = write_text(path, val);
	return err ? err : fault_attr(FAIL_FUNC, 1);
}

/* Start counting the calls of @func with the function profiler (its counts start at 0). */
static int profile_start(const char *func)
{
	int err = write_text(TRACING_DIR "/set_ftrace_filter", func);

	if (!err)
		err = write_text(TRACING_DIR "/function_profile_enabled", "0");
	return err ? err : write_text(TRACING_DIR "/function_profile_enabled", "1");
}

/* Calls of @func counted since profile_start(), summed over the CPUs' tables; -1 if none. */
static long profile_hits(const char *func)
{
	char path[256], line[512], name[256];
	long hits, total = -1;
	int cpu;
	FILE *f;

	for (cpu = 0;; cpu++) {
		snprintf(path, sizeof(path), TRACING_DIR "/trace_stat/function%d", cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		if (total < 0)
			total = 0;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%255s %ld", name, &hits) == 2 && !strcmp(name, func))
				total += hits;
		fclose(f);
	}
	return total;
}

static void profile_stop(void)
{
	write_text(TRACING_DIR "/function_profile_enabled", "0");
	write_text(TRACING_DIR "/set_ftrace_filter", "");
}

/*
 * Whether FLUSH_FUNC is to be counted: always, except on a uniprocessor riscv64 kernel,
 * whose flush_tlb_all() is inline (said on a diagnostic line). A function ftrace cannot
 * trace elsewhere is a failure of the case (profile_start() fails).
 */
static int count_flushes(void)
{
#ifdef __riscv
	if (count_cpus("/sys/devices/system/cpu/possible") <= 1) {
		printf("# pte_fallback: uniprocessor riscv64 flushes inline: flushes not counted\n");
		return 0;
	}
#endif
	return 1;
}

/* The page order of a 2 MiB block. */
static int chunk_order(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int order = 0;

	while ((page << order) < CHUNK_SIZE)
		order++;
	return order;
}

/*
 * Whether execmem maps its chunks with PMDs where it can. A kernel that maps no vmalloc
 * space with PMDs (arm64 with PTDUMP_DEBUGFS: 6.1's arch_vmap_pmd_supported() is false)
 * makes every chunk with PTEs without counting a fallback, so there is no fallback to
 * see. With at least one chunk made (the program loaded here makes one if none is left),
 * a kernel that can has a PMD-mapped chunk or has counted a fallback. 1, 0, or -errno if
 * the program does not load.
 */
static int pmd_capable(void)
{
	int fd = load_sized_filter(0, 20), capable;

	if (fd < 0)
		return fd;
	capable = execmem_stat("chunks_pmd_mapped") > 0 || execmem_stat("pmd_fallbacks") > 0;
	close(fd);
	return capable;
}

static void pte_fallback(void)
{
	long allocs = settled_allocations(), chunks = execmem_stat("chunks");
	long fallbacks = execmem_stat("pmd_fallbacks"), huge = execmem_stat("chunks_pmd_mapped");
	long made_hits = -1, freed_hits = -1, made, after, wrong = 0, wx = 0, ranges = 0;
	const char *ptdump = ptdump_path(), *flush = count_flushes() ? FLUSH_FUNC : NULL;
	int fds[MAX_PROGS], n = 0, i, err, load_err = 0, ok;
	long writable, huge_loaded;
	char first[512] = "";

	if (allocs < 0 || chunks < 0 || fallbacks < 0) {
		result(0, "pte_fallback", "no execmem statistics in " EXECMEM_STATS);
		return;
	}
	err = flush ? profile_start(flush) : 0;
	if (err) {
		result(0, "pte_fallback", "cannot profile %s: %s", flush, strerror(-err));
		goto out;
	}
	err = fail_blocks(chunk_order(), 1);
	if (err) {
		result(0, "pte_fallback", "cannot set up fail_page_alloc: %s", strerror(-err));
		goto out;
	}
	/* Until a chunk is made: it must be a fallback (an old chunk may be freed meanwhile). */
	while (n < MAX_PROGS && execmem_stat("pmd_fallbacks") == fallbacks) {
		fds[n] = load_add_filter(n, PROG_ADDS, 1);
		if (fds[n] < 0) {
			load_err = fds[n];
			break;
		}
		n++;
	}
	fail_blocks(0, 0);
	if (flush)
		made_hits = profile_hits(flush);
	if (load_err || n == MAX_PROGS) {
		result(0, "pte_fallback", "no fallback chunk after %d programs: %s", n,
		       load_err ? strerror(-load_err) : "all loaded");
		goto out;
	}
	made = execmem_stat("chunks");
	huge_loaded = execmem_stat("chunks_pmd_mapped");
	for (i = 0; i < n; i++)
		wrong += pkt_run_once(fds[i]) != i + PROG_ADDS;
	writable = execmem_stat("writable_entries");
	if (ptdump)
		wx = ptdump_wx(ptdump, &ranges, first, sizeof(first));
	printf("# pte_fallback: %d programs loaded, chunks %ld -> %ld, pmd_fallbacks %ld -> %ld, chunks_pmd_mapped %ld -> %ld, %ld wrong results, %ld writable entries, %s: %ld ranges, %ld W+X %s\n",
	       n, chunks, made, fallbacks, execmem_stat("pmd_fallbacks"), huge, huge_loaded, wrong,
	       writable, ptdump ? ptdump : "no ptdump", ranges, wx, first);
	err = flush ? profile_start(flush) : 0;
	for (i = 0; i < n; i++)
		close(fds[i]);
	i = n;
	n = 0;
	/* The programs' images are freed after a grace period; the chunk with the last one. */
	after = execmem_wait_below("chunks", made - 1);
	if (flush) {
		settled_allocations();
		freed_hits = err ? -1 : profile_hits(flush);
		printf("# pte_fallback: %s called %ld times while loading %d programs into the new chunk, %ld times while freeing them and it (want 1 to %d, and %d to %d)\n",
		       flush, made_hits, i, freed_hits, FLUSH_MAX, FREED_MIN, FLUSH_MAX);
	}
	ok = after < made && execmem_stat("pmd_fallbacks") == fallbacks + 1 && huge_loaded <= huge &&
	     !wrong && !writable && !wx;
	if (flush)
		ok = ok && made_hits >= 1 && made_hits <= FLUSH_MAX &&
		     freed_hits >= FREED_MIN && freed_hits <= FLUSH_MAX;
	result(ok, "pte_fallback",
	       "chunks %ld after closing (want fewer than %ld), pmd_fallbacks %ld (want %ld)",
	       after, made, execmem_stat("pmd_fallbacks"), fallbacks + 1);
out:
	fail_blocks(0, 0);
	if (flush)
		profile_stop();
	for (i = 0; i < n; i++)
		close(fds[i]);
}

static void protect_alias_fails(void)
{
	long allocs = settled_allocations(), chunks = execmem_stat("chunks");
	long mapped = execmem_stat("bytes_mapped"), chunks_failed, mapped_failed, chunks_retry = -1;
	int fds[MAX_PROGS], n = 0, i, err, fd = -1;

	err = fail_func("execmem_protect_alias", -ENOMEM);
	if (err) {
		result(0, "protect_alias_fails", "cannot make execmem_protect_alias fail: %s",
		       strerror(-err));
		fail_func(NULL, 0);
		return;
	}
	/* Fill the chunks there are; the load that needs one more must fail. */
	while (n < MAX_PROGS && (fds[n] = load_add_filter(n, PROG_ADDS, 1)) >= 0)
		n++;
	fail_func(NULL, 0);
	chunks_failed = execmem_stat("chunks");
	mapped_failed = execmem_stat("bytes_mapped");
	if (n < MAX_PROGS) {
		fd = load_add_filter(n, PROG_ADDS, 1);
		chunks_retry = execmem_stat("chunks");
		printf("# protect_alias_fails: %d programs loaded, program %d: %s with the fault, %s without; chunks %ld -> %ld -> %ld, bytes_mapped %ld -> %ld\n",
		       n, n, strerror(-fds[n]), fd < 0 ? strerror(-fd) : "loaded", chunks,
		       chunks_failed, chunks_retry, mapped, mapped_failed);
	} else {
		printf("# protect_alias_fails: all %d programs loaded with the fault; chunks %ld -> %ld, bytes_mapped %ld -> %ld\n",
		       n, chunks, chunks_failed, mapped, mapped_failed);
	}
	/*
	 * The JIT, always on, gives up without an image: ENOTSUPP (524, kernel-internal). Old
	 * chunks may be freed meanwhile (programs of earlier tests): none may be added.
	 */
	result(n < MAX_PROGS && fds[n] == -524 && chunks_failed <= chunks &&
	       mapped_failed <= mapped && fd >= 0 && chunks_retry > chunks_failed &&
	       pkt_run_once(fd) == n + PROG_ADDS, "protect_alias_fails",
	       "the load that needs a new chunk fails with ENOTSUPP (524) and adds no chunk, then loads into a new chunk without the fault");
	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i++)
		close(fds[i]);
	execmem_wait_below("chunks", chunks);
	if (settled_allocations() != allocs)
		printf("# protect_alias_fails: execmem allocations %ld after closing, %ld before\n",
		       settled_allocations(), allocs);
}

static void text_copy_fails(void)
{
	uint64_t args[5] = { 0, 20, 300, 4, 5000 };
	long allocs, left;
	int fd, err, failed;
	uint32_t ret;

#ifdef __riscv
	printf("ok %d text_copy_fails # SKIP no BPF trampolines on riscv64 in 6.1\n", ++casenum);
	return;
#endif
	fd = dummy_ops_load(logbuf, sizeof(logbuf));
	if (fd < 0) {
		result(0, "text_copy_fails", "struct_ops load: %s: %.300s", strerror(-fd), logbuf);
		return;
	}
	allocs = settled_allocations();	/* the program's own image included */
	err = fail_func("execmem_text_copy", -EFAULT);
	if (err) {
		result(0, "text_copy_fails", "cannot make execmem_text_copy fail: %s",
		       strerror(-err));
		fail_func(NULL, 0);
		close(fd);
		return;
	}
	failed = ctx_test_run(fd, args, sizeof(args), -1, &ret);
	fail_func(NULL, 0);
	left = settled_allocations();
	err = ctx_test_run(fd, args, sizeof(args), -1, &ret);
	result(failed == -EFAULT && left <= allocs && !err && ret == 5020, "text_copy_fails",
	       "BPF_PROG_TEST_RUN %s with the fault (want EFAULT), execmem allocations %ld -> %ld (want no change); without it: %s, returned %u (want 5020)",
	       failed ? strerror(-failed) : "succeeded", allocs, left,
	       err ? strerror(-err) : "ran", ret);
	close(fd);
}

int main(void)
{
	const char *missing = access(EXECMEM_STATS, R_OK) ? "no execmem in this kernel" :
			      access(FAIL_PAGE, R_OK) ? "no fail_page_alloc (CONFIG_FAIL_PAGE_ALLOC)" :
			      access(FAIL_FUNC, R_OK) ? "no fail_function (CONFIG_FAIL_FUNCTION)" :
			      NULL;
	int capable;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..3\n");
	if (missing) {
		printf("ok 1 pte_fallback # SKIP %s\nok 2 protect_alias_fails # SKIP %s\nok 3 text_copy_fails # SKIP %s\n",
		       missing, missing, missing);
		return 0;
	}
	capable = pmd_capable();
	if (capable > 0)
		pte_fallback();
	else if (capable < 0)
		result(0, "pte_fallback", "a program does not load: %s", strerror(-capable));
	else
		printf("ok %d pte_fallback # SKIP execmem maps no chunk with a PMD on this kernel (arm64 with PTDUMP_DEBUGFS: no PMD-mapped vmalloc space)\n",
		       ++casenum);
	protect_alias_fails();
	text_copy_fails();
	return failures ? 1 : 0;
}
