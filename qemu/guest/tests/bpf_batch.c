// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_batch.c - guest test of BPF_TRACE_BATCH links (batched fentry/fexit attach).
 *
 * Fentry and fexit programs on NFUNCS syscall entry points (getpid, getppid, ...), each
 * counting its calls in its own slot of an array map, loaded and attached with raw bpf(2):
 *
 *   attach_fire_detach   one BPF_LINK_CREATE attaches all of them; the link's info says link
 *                        type 256 (BPF_LINK_TYPE_TRACING_BATCH, no upstream type's number);
 *                        ftrace's enabled_functions lists every function; each syscall bumps
 *                        its slot; closing the link detaches all: enabled_functions is back to
 *                        what it was, slots stay
 *   link_info_members    the link's info gives its programs' ids in attach order (count alone
 *                        with no array, all in a large enough one, ENOSPC in a smaller one,
 *                        EINVAL for an array of count 0 or a count without one, EFAULT for an
 *                        unmapped one), and its fdinfo lists them on a prog_ids line
 *   bpftool_link_show    bpftool (built from the tree) shows the link's programs' ids in
 *                        attach order, in plain and JSON output
 *   bad_fd_in_middle     a closed fd at index 2: -EBADF, err_idx 2, nothing attached; the
 *                        same programs without it then attach (nothing was left claimed)
 *   wrong_prog_type      a socket filter at index 1: -EINVAL, err_idx 1, nothing attached
 *   duplicate_target     two programs for one function: -EBUSY, err_idx of the second
 *   target_taken         a function with a single fentry link: -EBUSY at its index; and a
 *                        single attach to a function a batch holds: -EBUSY
 *   count_zero           cnt 0: -EINVAL
 *   count_over_max       cnt BPF_TRACE_BATCH_MAX_CNT + 1: -E2BIG
 *   fds_fault            prog_fds pointing to unmapped memory: -EFAULT, err_idx 0
 *   prog_fd_set          link_create.prog_fd not 0: -EINVAL
 *   rest_not_zero        a byte of link_create after tracing_batch set: -EINVAL
 *   attach_under_load    20 attach/detach rounds while three processes call the functions,
 *                        sleeping 1 ms after each round of calls. Only with the argument
 *                        load=1 (kernel command line bpf_batch.load=1); otherwise SKIP. make
 *                        check runs it on x86_64-tcg1, all vCPUs on one QEMU TCG thread: with
 *                        a thread per vCPU (QEMU 7.2), a vCPU went on trapping on the int3
 *                        that text_poke_bp() had already replaced by the NOP again (stale
 *                        translated code; an RCU stall, the guest never finishes). The
 *                        unpatched 6.1 base hung the same way with one fentry link attached
 *                        and detached while one process called getpgrp in a loop (see
 *                        qemu/arch/x86_64-tcg1.conf).
 *   single_links_cheap   one single (BPF_LINK_TYPE_TRACING) link per program, attached, then
 *                        detached one by one: each program counts while attached, none
 *                        after, enabled_functions back as it was, and the ftrace_ops of the
 *                        trampolines was unregistered once (debugfs bpf_trampoline), by the
 *                        last detach: they share one ops (an ops per trampoline is
 *                        unregistered, and waited for, on every detach)
 *   ipmodify_share       a single fexit link and fail_function's IPMODIFY kprobe (probability
 *                        0) on the getpgid stub, the kprobe registered after the link and,
 *                        with another link attached elsewhere, before it: both attach, and
 *                        the program counts every call; then fail_function injects -ENOSPC
 *                        into this process's calls: each must fail with ENOSPC (the
 *                        function "returns" the injected value through the trampoline) and
 *                        the program must count each
 *   batch_ipmodify_share as ipmodify_share, the fexit program and the fentry program of
 *                        funcs[0] in one batch, the kprobe registered after and before it
 *   single_detach_fails  the n-th allocation of a single link's detach fails (failslab,
 *                        /proc/self/fail-nth), for every n the detach reaches, while another
 *                        link keeps the trampolines' shared ftrace_ops: a detach that fails
 *                        leaves the function calling its image, whose program (held by the
 *                        link alone) still exists and runs, and a new link on the function
 *                        attaches, runs and detaches (the failed detach kept its trampoline:
 *                        freed, it stayed in the table of trampolines by function, and the
 *                        function in the ops' filter), and the kept program is freed, while
 *                        the new link is attached, once its attach has retired the image
 *                        that called it; then a fexit link's detach fails, and
 *                        fail_function on its function is refused with EBUSY (the kept image
 *                        cannot be rebuilt for sharing; rebuilding it deadlocked on ftrace's
 *                        direct_mutex) until a new fexit link takes the function over
 *   failed_register_live a batch whose attach registers the trampolines' shared ftrace_ops
 *                        (no other link is attached) and fails after ftrace listed the ops
 *                        must retire its images as a detach does. Members: an fmod_ret
 *                        program (counting) on the nanosleep stub and an fexit program on
 *                        the recvmmsg stub, which fail_function holds (an IPMODIFY kprobe:
 *                        ftrace_hash_ipmodify_enable() walks the ftrace records in address
 *                        order with the ops on ftrace_ops_list, and at that late one the
 *                        trampoline's ops_func asks for an image built for sharing:
 *                        -EAGAIN, and the batch is attached again with it). A kprobe
 *                        event and the function tracer on the nanosleep stub make its call
 *                        site go through ftrace_regs_caller and the list function (one
 *                        ftrace_ops alone would get a trampoline of its own on x86), so
 *                        call_direct_funcs() sends a caller arriving in that window into the
 *                        batch's first image, which runs the program, calls the function and
 *                        sleeps in it. NSLEEPERS processes call nanosleep (SLEEP_MS) in a
 *                        loop during ATTEMPTS attaches and detaches (or FAIL_SECS): each
 *                        must attach, the first with two ftrace updates (the registration
 *                        that failed and the one that holds), the others with one (the
 *                        trampoline stays marked for sharing while its programs keep it:
 *                        fail_function holds the function throughout, and ftrace tells
 *                        sharers that an IPMODIFY user is gone only when the kprobes' ops is
 *                        unregistered, which the kprobe event on nanosleep prevents);
 *                        after an attempt whose images a caller entered, the next one waits
 *                        until the caller is back (execmem is first-fit: the next batch's
 *                        image, of the same layout, would be built where a freed one was,
 *                        and the caller would return into valid code, unbalancing the new
 *                        image's percpu_ref unseen). Every sleeper must live until it is
 *                        killed (one that returns into a freed image oopses: execmem fills
 *                        freed text with traps); the kernel's taint must not change;
 *                        execmem's allocation count must not grow, and enabled_functions
 *                        ends as it was. The calls that entered the images are counted but
 *                        not required: those of the failed registration's window cannot be
 *                        told from those after the retry. current_tracer must be nop and
 *                        set_ftrace_filter empty before (they are left so).
 *
 * Arguments (kernel command line bpf_batch.ARG): load=1 runs attach_under_load; only=NAME[,NAME]
 * runs only the tests named by their first case (count_zero stands for the five cases of
 * cnt and pointers); the KTAP plan then counts their cases alone.
 *
 * Every failure case also checks that enabled_functions did not change. The whole test is
 * skipped, with the reason, when the kernel has no ftrace direct calls (arm64 and riscv64
 * in 6.1: no register_ftrace_direct_multi in kallsyms); without BPF_TRACE_BATCH (the base, or
 * a patch before the feature: no bpf_tracing_batch_link_attach in kallsyms) every case but
 * single_detach_fails, which tests single links only, is skipped with that reason.
 */
#define _GNU_SOURCE
#include "../fentry_raw.h"
#include "../ktap.h"
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#define NFUNCS	8
#define NSLEEPERS	256	/* failed_register_live: processes calling nanosleep */
#define SLEEP_MS	1000	/* each call's sleep: several grace periods long */
#define FAIL_SECS	40	/* how long batches are made to fail, at most */
#define ATTEMPTS	16	/* batches attached and detached, at most */
#define FREED_SECS	30	/* single_detach_fails: a kept program's wait to be freed */

/* The syscall stubs, which fail_function and fmod_ret accept (error-injectable). */
#if defined(__x86_64__)
#define STUB_PREFIX	"__x64_sys_"
#elif defined(__aarch64__)
#define STUB_PREFIX	"__arm64_sys_"
#else
#define STUB_PREFIX	"__riscv_sys_"
#endif
#define FAIL_FUNC_DIR	"/sys/kernel/debug/fail_function"
#define KPROBE_EVENT	"bpf_batch/nsleep"
#define TRAMP_STATS	"/sys/kernel/debug/bpf_trampoline"
#define FAILSLAB_DIR	"/sys/kernel/debug/failslab"
#define BPFTOOL		"/bin/bpftool"

/* The generic syscall table (arm64, riscv64) has no getpgrp: getpgid(0) there. */
#ifdef SYS_getpgrp
#define LAST_NAME	"getpgrp"
#define LAST_NR		SYS_getpgrp
#else
#define LAST_NAME	"getpgid"
#define LAST_NR		SYS_getpgid
#endif

static const char *const funcs[NFUNCS] = {
	"getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "gettid", LAST_NAME,
};
static const long nrs[NFUNCS] = {
	SYS_getpid, SYS_getppid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_gettid,
	LAST_NR,
};

static char verifier_log[65536];
static int map;
static uint32_t progs[NFUNCS];	/* progs[i] on funcs[i]; even i fentry, odd i fexit */
static uint32_t btf_ids[NFUNCS];
static char *enabled_before;
static struct btf_funcs bf;
static int load_enabled;	/* bpf_batch.load=1: attach_under_load runs */
static int has_batch;		/* the kernel has BPF_TRACE_BATCH links */

static void call_all(void)
{
	int i;

	for (i = 0; i < NFUNCS; i++)
		syscall(nrs[i]);	/* getpgid's argument does not matter: it is entered */
}

static uint64_t slot(int i)
{
	uint64_t v = 0;

	map_lookup(map, i, &v);
	return v;
}

/*
 * Call every function once; 1 if the programs of funcs[0] .. funcs[@n - 1] each ran (@run)
 * or no program ran at all (!@run), else 0 after saying which did not behave.
 */
static int programs_run(const char *name, int n, int run)
{
	uint64_t before[NFUNCS];
	int i, ok = 1;

	for (i = 0; i < NFUNCS; i++)
		before[i] = slot(i);
	call_all();
	for (i = 0; i < NFUNCS; i++) {
		if (run && i < n && slot(i) <= before[i]) {
			printf("# %s: program %d (%s) did not run\n", name, i, funcs[i]);
			ok = 0;
		} else if (!run && slot(i) != before[i]) {
			printf("# %s: program %d (%s) still runs after close\n", name, i,
			       funcs[i]);
			ok = 0;
		}
	}
	return ok;
}

/* 1 if enabled_functions is as it was before any attach; says what differs otherwise. */
static int enabled_unchanged(const char *name)
{
	char *now = tracing_read("enabled_functions");
	int same = now && !strcmp(now, enabled_before);

	if (!same)
		printf("# %s: enabled_functions changed:\n# %.300s\n", name, now ? now : "(unreadable)");
	free(now);
	return same;
}

/* Expect a failed batch: errno @want_err and err_idx @want_idx, nothing attached. */
static void expect_fail(const char *name, const uint32_t *fds, uint32_t cnt, uint64_t addr,
			int want_err, uint32_t want_idx)
{
	uint32_t idx;
	int fd = batch_attach(fds, cnt, addr, &idx);

	if (fd >= 0) {
		close(fd);
		result(0, name, "attach succeeded, want %s", strerror(want_err));
		return;
	}
	if (fd != -want_err || idx != want_idx) {
		result(0, name, "got %s err_idx %u, want %s err_idx %u", strerror(-fd), idx,
		       strerror(want_err), want_idx);
		return;
	}
	result(enabled_unchanged(name), name, NULL);
}

static void test_attach_fire_detach(void)
{
	const char *name = "attach_fire_detach";
	struct bpf_link_info info;
	char *during, fn[64];
	uint32_t idx;
	int i, fd, ok = 1;

	fd = batch_attach(progs, NFUNCS, 0, &idx);
	if (fd < 0) {
		result(0, name, "attach failed: %s (err_idx %u)", strerror(-fd), idx);
		return;
	}
	memset(&info, 0, sizeof(info));
	if (obj_info_by_fd(fd, &info, sizeof(info)) || info.type != LINK_TYPE_TRACING_BATCH) {
		printf("# link info: %s, type %u, want %u\n", strerror(errno), info.type,
		       LINK_TYPE_TRACING_BATCH);
		ok = 0;
	}
	during = tracing_read("enabled_functions");
	for (i = 0; i < NFUNCS; i++) {
		snprintf(fn, sizeof(fn), SYSCALL_PREFIX "%s", funcs[i]);
		if (!during || !ftrace_list_has(during, fn)) {
			printf("# %s not in enabled_functions while attached\n", fn);
			ok = 0;
		}
	}
	free(during);
	if (!programs_run(name, NFUNCS, 1))
		ok = 0;
	close(fd);
	if (!enabled_unchanged(name))
		ok = 0;
	if (!programs_run(name, NFUNCS, 0))
		ok = 0;
	result(ok, name, NULL);
}

/* The ids of the programs whose fds are @fds[0, @n), in @ids; 0 or -1 (printed). */
static int prog_ids(const uint32_t *fds, uint32_t *ids, int n)
{
	struct bpf_prog_info pinfo;
	int i;

	for (i = 0; i < n; i++) {
		memset(&pinfo, 0, sizeof(pinfo));
		if (prog_info_by_fd(fds[i], &pinfo)) {
			printf("# program info of fd %u: %s\n", fds[i], strerror(errno));
			return -1;
		}
		ids[i] = pinfo.id;
	}
	return 0;
}

/*
 * The batch link @fd's info into @info, with info.tracing_batch's array @ids (NULL: none) of
 * @count entries: 0 or the errno.
 */
static int batch_link_info(int fd, struct trace_batch_link_info *info, void *ids, uint32_t count)
{
	memset(info, 0, sizeof(*info));
	info->prog_ids = (uintptr_t)ids;
	info->count = count;
	return obj_info_by_fd(fd, info, sizeof(*info)) ? errno : 0;
}

/*
 * link_info_members: a batch link's info gives its programs' ids in attach order (the
 * programs attached in the reverse of their load order, so that ids sorted by value do not
 * pass): count alone when prog_ids is 0, the ids in a large enough array, ENOSPC (the first
 * ids written, count left as given) in a smaller one, EINVAL for an array of count 0 and for
 * a count without an array, EFAULT for an unmapped array; fdinfo's prog_ids line lists them.
 */
static void test_link_info_members(void)
{
	const char *name = "link_info_members";
	uint32_t fds[NFUNCS], want[NFUNCS], got[NFUNCS + 1], idx;
	struct trace_batch_link_info info;
	char path[64], line[256], list[256] = "", *text;
	int i, fd, err, ok = 1, len = 0;
	void *gone;

	for (i = 0; i < NFUNCS; i++)
		fds[i] = progs[NFUNCS - 1 - i];
	if (prog_ids(fds, want, NFUNCS)) {
		result(0, name, "cannot read the programs' ids");
		return;
	}
	fd = batch_attach(fds, NFUNCS, 0, &idx);
	if (fd < 0) {
		result(0, name, "attach failed: %s (err_idx %u)", strerror(-fd), idx);
		return;
	}
	err = batch_link_info(fd, &info, NULL, 0);
	if (err || info.count != NFUNCS || info.prog_id != want[0]) {
		printf("# count only: %s, count %u, prog_id %u; want %d and %u\n", strerror(err),
		       info.count, info.prog_id, NFUNCS, want[0]);
		ok = 0;
	}
	memset(got, 0, sizeof(got));
	err = batch_link_info(fd, &info, got, NFUNCS + 1);
	if (err || info.count != NFUNCS || memcmp(got, want, sizeof(want)) || got[NFUNCS]) {
		printf("# %d entries: %s, count %u, ids %u %u ... %u (%u), want %u %u ... %u (0)\n",
		       NFUNCS + 1, strerror(err), info.count, got[0], got[1], got[NFUNCS - 1],
		       got[NFUNCS], want[0], want[1], want[NFUNCS - 1]);
		ok = 0;
	}
	memset(got, 0, sizeof(got));
	err = batch_link_info(fd, &info, got, 2);
	if (err != ENOSPC || got[0] != want[0] || got[1] != want[1] || got[2] ||
	    info.count != 2) {
		printf("# 2 entries: %s, ids %u %u %u, count %u; want ENOSPC, %u %u 0, count 2\n",
		       strerror(err), got[0], got[1], got[2], info.count, want[0], want[1]);
		ok = 0;
	}
	err = batch_link_info(fd, &info, got, 0);
	if (err != EINVAL) {
		printf("# an array with count 0: %s, want EINVAL\n", strerror(err));
		ok = 0;
	}
	err = batch_link_info(fd, &info, NULL, NFUNCS);
	if (err != EINVAL) {
		printf("# a count without an array: %s, want EINVAL\n", strerror(err));
		ok = 0;
	}
	gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED || munmap(gone, 4096)) {
		printf("# mmap/munmap of a page: %s\n", strerror(errno));
		ok = 0;
	} else {
		err = batch_link_info(fd, &info, gone, NFUNCS);
		if (err != EFAULT) {
			printf("# an unmapped array: %s, want EFAULT\n", strerror(err));
			ok = 0;
		}
	}
	for (i = 0; i < NFUNCS; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%u", i ? " " : "", want[i]);
	snprintf(line, sizeof(line), "prog_ids:\t%s\n", list);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	text = text_read(path);
	if (!text || !strstr(text, line)) {
		printf("# %s has no line \"prog_ids:\t%s\"\n", path, list);
		ok = 0;
	}
	free(text);
	close(fd);
	result(ok && enabled_unchanged(name), name, NULL);
}

/*
 * Run @argv with its standard output and error into @buf (NUL-terminated, at most @size - 1
 * bytes kept): its exit status, 128 + the signal that ended it, or -1 (errno).
 */
static int run_capture(char *const argv[], char *buf, size_t size)
{
	size_t len = 0;
	int pfd[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while (len < size - 1 && (n = read(pfd[0], buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * bpftool_link_show: bpftool (built from the tree, /bin/bpftool) shows a batch link with its
 * programs' ids in attach order, in its plain ("prog_cnt N  prog_ids A,B,...") and JSON
 * ("prog_cnt":N,"prog_ids":[A,B,...]) output. A bpftool that shows the link without them
 * (a tree before bpftool learnt batch links) is reported as SKIP, which only the matrix's
 * earlier cells allow.
 */
static void test_bpftool_link_show(void)
{
	const char *name = "bpftool_link_show";
	char id[16], plain[512], json[512], out[4096];
	char *show[] = { BPFTOOL, "link", "show", "id", id, NULL };
	char *show_json[] = { BPFTOOL, "-j", "link", "show", "id", id, NULL };
	uint32_t want[NFUNCS], idx;
	struct bpf_link_info info;
	int i, fd, st, ok = 1, lp, lj;

	if (access(BPFTOOL, X_OK)) {
		result(0, name, "no %s (qemu/arch/ARCH.conf: BPFTOOL)", BPFTOOL);
		return;
	}
	if (prog_ids(progs, want, NFUNCS)) {
		result(0, name, "cannot read the programs' ids");
		return;
	}
	fd = batch_attach(progs, NFUNCS, 0, &idx);
	memset(&info, 0, sizeof(info));
	if (fd < 0 || obj_info_by_fd(fd, &info, sizeof(info))) {
		result(0, name, "attach failed (%s, err_idx %u) or no link info",
		       strerror(fd < 0 ? -fd : errno), idx);
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(id, sizeof(id), "%u", info.id);
	lp = snprintf(plain, sizeof(plain), "prog_cnt %d  prog_ids ", NFUNCS);
	lj = snprintf(json, sizeof(json), "\"prog_cnt\":%d,\"prog_ids\":[", NFUNCS);
	for (i = 0; i < NFUNCS; i++) {
		lp += snprintf(plain + lp, sizeof(plain) - lp, "%s%u", i ? "," : "", want[i]);
		lj += snprintf(json + lj, sizeof(json) - lj, "%s%u", i ? "," : "", want[i]);
	}
	snprintf(json + lj, sizeof(json) - lj, "]");

	st = run_capture(show, out, sizeof(out));
	if (st || !strstr(out, "tracing_batch")) {
		printf("# %s link show id %s: status %d, output:\n# %.300s\n", BPFTOOL, id, st,
		       out);
		ok = 0;
	} else if (!strstr(out, "prog_cnt")) {
		close(fd);
		printf("ok %d %s # SKIP this tree's bpftool shows no programs of a batch link: "
		       "%.200s\n", ++casenum, name, out);
		return;
	} else if (!strstr(out, plain)) {
		printf("# %s link show id %s: no \"%s\" in:\n# %.300s\n", BPFTOOL, id, plain, out);
		ok = 0;
	}
	st = run_capture(show_json, out, sizeof(out));
	if (ok && (st || !strstr(out, json))) {
		printf("# %s -j link show id %s: status %d, no %s in:\n# %.300s\n", BPFTOOL, id,
		       st, json, out);
		ok = 0;
	}
	close(fd);
	result(ok && enabled_unchanged(name), name, NULL);
}

static void test_bad_fd_in_middle(void)
{
	const char *name = "bad_fd_in_middle";
	uint32_t fds[NFUNCS], idx;
	int i, fd, spare = dup(0);

	/* A number that is certainly no open file: a closed descriptor. */
	close(spare);
	memcpy(fds, progs, sizeof(fds));
	fds[2] = spare;
	fd = batch_attach(fds, NFUNCS, 0, &idx);
	if (fd >= 0 || fd != -EBADF || idx != 2 || !enabled_unchanged(name)) {
		if (fd >= 0)
			close(fd);
		result(0, name, "got %s err_idx %u, want EBADF err_idx 2 and nothing attached",
		       fd >= 0 ? "a link" : strerror(-fd), idx);
		return;
	}
	/* The members before the bad one must have been released: attach them now. */
	for (i = 2; i < NFUNCS - 1; i++)
		fds[i] = progs[i + 1];
	fd = batch_attach(fds, NFUNCS - 1, 0, &idx);
	if (fd < 0) {
		result(0, name, "the good members then failed: %s (err_idx %u)", strerror(-fd),
		       idx);
		return;
	}
	close(fd);
	result(enabled_unchanged(name), name, NULL);
}

static void test_wrong_prog_type(void)
{
	const struct bpf_insn ret0[] = { MOV64_IMM(BPF_REG_0, 0), EXIT() };
	int sock = prog_load_type(BPF_PROG_TYPE_SOCKET_FILTER, ret0, 2, verifier_log,
				  sizeof(verifier_log));
	uint32_t fds[3] = { progs[0], 0, progs[1] };

	if (sock < 0) {
		result(0, "wrong_prog_type", "socket filter load failed: %s", strerror(-sock));
		return;
	}
	fds[1] = sock;
	expect_fail("wrong_prog_type", fds, 3, 0, EINVAL, 1);
	close(sock);
}

static void test_duplicate_target(void)
{
	int again = fentry_load(BPF_TRACE_FENTRY, btf_ids[0], map, 0, verifier_log,
				sizeof(verifier_log));
	uint32_t fds[3] = { progs[0], progs[1], 0 };

	if (again < 0) {
		result(0, "duplicate_target", "load failed: %s", strerror(-again));
		return;
	}
	fds[2] = again;
	expect_fail("duplicate_target", fds, 3, 0, EBUSY, 2);
	close(again);
}

static void test_target_taken(void)
{
	const char *name = "target_taken";
	int single, other, fd, err;
	uint32_t fds[2] = { progs[1], progs[2] }, idx;

	/* progs[2] (fentry on funcs[2]) attached alone, then a batch that includes it. */
	single = fentry_attach(progs[2], BPF_TRACE_FENTRY);
	if (single < 0) {
		result(0, name, "single attach failed: %s", strerror(-single));
		return;
	}
	fd = batch_attach(fds, 2, 0, &idx);
	close(single);
	if (fd >= 0 || fd != -EBUSY || idx != 1) {
		if (fd >= 0)
			close(fd);
		result(0, name, "batch over a taken target: %s err_idx %u, want EBUSY err_idx 1",
		       fd >= 0 ? "attached" : strerror(-fd), idx);
		return;
	}
	/* The other way round: a batch holds funcs[0]; a single fentry there must fail. */
	other = fentry_load(BPF_TRACE_FENTRY, btf_ids[0], map, 0, verifier_log,
			    sizeof(verifier_log));
	fd = batch_attach(progs, 1, 0, &idx);
	if (other < 0 || fd < 0) {
		result(0, name, "setup failed: %s", strerror(other < 0 ? -other : -fd));
		if (other >= 0)
			close(other);
		if (fd >= 0)
			close(fd);
		return;
	}
	single = fentry_attach(other, BPF_TRACE_FENTRY);
	err = single;
	if (single >= 0)
		close(single);
	close(fd);
	close(other);
	if (err != -EBUSY) {
		result(0, name, "single attach into a batch's target: %s, want EBUSY",
		       err >= 0 ? "attached" : strerror(-err));
		return;
	}
	result(enabled_unchanged(name), name, NULL);
}

static void test_counts_and_pointers(void)
{
	static uint32_t many[TRACE_BATCH_MAX_CNT + 1];
	void *unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	union bpf_attr a;
	struct trace_batch_attr *b = (void *)&a;
	int fd;

	expect_fail("count_zero", progs, 0, 0, EINVAL, 0);
	expect_fail("count_over_max", many, TRACE_BATCH_MAX_CNT + 1, 0, E2BIG,
		    TRACE_BATCH_MAX_CNT + 1);
	expect_fail("fds_fault", NULL, 2, (uintptr_t)unmapped, EFAULT, 0);

	memset(&a, 0, sizeof(a));
	b->prog_fd = progs[0];
	b->attach_type = ATTACH_TRACE_BATCH;
	b->prog_fds = (uintptr_t)progs;
	b->cnt = NFUNCS;
	fd = sys_bpf(BPF_LINK_CREATE, &a);
	if (fd >= 0)
		close(fd);
	result(fd < 0 && errno == EINVAL && enabled_unchanged("prog_fd_set"), "prog_fd_set",
	       fd >= 0 ? "attached with prog_fd set" : NULL);

	/* The byte right after err_idx: kprobe_multi's addrs in the union, unused here. */
	memset(&a, 0, sizeof(a));
	b->attach_type = ATTACH_TRACE_BATCH;
	b->prog_fds = (uintptr_t)progs;
	b->cnt = NFUNCS;
	((unsigned char *)(b + 1))[0] = 1;
	fd = sys_bpf(BPF_LINK_CREATE, &a);
	if (fd >= 0)
		close(fd);
	result(fd < 0 && errno == EINVAL && enabled_unchanged("rest_not_zero"), "rest_not_zero",
	       fd >= 0 ? "attached with a later byte of link_create set" : NULL);
}

static void test_attach_under_load(void)
{
	const char *name = "attach_under_load";
	pid_t kids[3];
	uint32_t idx;
	int i, round, fd, ok = 1;

	if (!load_enabled) {
		printf("ok %d %s # SKIP bpf_batch.load=1 runs it (make check: x86_64-tcg1; "
		       "see the file header)\n", ++casenum, name);
		return;
	}
	for (i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			for (;;) {
				call_all();
				usleep(1000);
			}
		}
	}
	for (round = 0; round < 20 && ok; round++) {
		fd = batch_attach(progs, NFUNCS, 0, &idx);
		if (fd < 0) {
			printf("# round %d: attach failed: %s (err_idx %u)\n", round,
			       strerror(-fd), idx);
			ok = 0;
			break;
		}
		close(fd);
	}
	for (i = 0; i < 3; i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	}
	result(ok && enabled_unchanged(name), name, NULL);
}

/*
 * A kprobe event (an ftrace_ops that saves registers) and the function tracer on @func,
 * which then calls ftrace_regs_caller and the list function; or (@on 0) neither, the
 * function tracer's filter cleared. 0 or -errno of the first write that failed.
 */
static int regs_list_tracers(const char *func, int on)
{
	char text[128];
	int err;

	if (!on) {
		/* The state the test starts from (checked there). */
		err = tracing_write("current_tracer", "nop");
		err = tracing_write("set_ftrace_filter", "\n") ?: err;
		err = tracing_write("trace", "") ?: err;
		err = tracing_write("events/" KPROBE_EVENT "/enable", "0") ?: err;
		return write_text_flags(TRACING_DIR "/kprobe_events", "-:" KPROBE_EVENT "\n",
					O_APPEND) ?: err;
	}
	snprintf(text, sizeof(text), "p:" KPROBE_EVENT " %s\n", func);
	err = write_text_flags(TRACING_DIR "/kprobe_events", text, O_APPEND);
	err = err ?: tracing_write("events/" KPROBE_EVENT "/enable", "1");
	err = err ?: tracing_write("set_ftrace_filter", func);
	return err ?: tracing_write("current_tracer", "function");
}

/*
 * Hold @func with fail_function's kprobe, which never fires: probability 0, the kernel's
 * default, and only for processes that ask for faults; or (@on 0) release it, task-filter
 * back to the kernel's default. 0 or -errno.
 */
static int fail_function_hold(const char *func, int on)
{
	char text[128];
	int err;

	snprintf(text, sizeof(text), "%s%s\n", on ? "" : "!", func);
	if (!on) {
		err = write_text(FAIL_FUNC_DIR "/inject", text);
		return write_text(FAIL_FUNC_DIR "/task-filter", "N") ?: err;
	}
	err = write_text(FAIL_FUNC_DIR "/probability", "0");
	err = err ?: write_text(FAIL_FUNC_DIR "/task-filter", "Y");
	return err ?: write_text(FAIL_FUNC_DIR "/inject", text);
}

/*
 * Make fail_function inject -ENOSPC into every call of @func (held with
 * fail_function_hold()) by this process, call it @calls times, and put the injection
 * back off: the number of calls that failed with ENOSPC, or -1 (said why).
 */
static int injected_calls(const char *name, const char *func, int calls)
{
	char path[128], *times = text_read(FAIL_FUNC_DIR "/times");
	int i, n = 0, err = times ? 0 : -errno;

	snprintf(path, sizeof(path), FAIL_FUNC_DIR "/%s/retval", func);
	/* -ENOSPC as the u64 the knob takes */
	err = err ?: write_text(path, "0xffffffffffffffe4");
	err = err ?: write_text(FAIL_FUNC_DIR "/times", "-1");
	err = err ?: write_text("/proc/self/make-it-fail", "1");
	err = err ?: write_text(FAIL_FUNC_DIR "/probability", "100");
	if (err) {
		printf("# %s: setting up fail_function's injection into %s: %s\n", name, func,
		       strerror(-err));
		n = -1;
	}
	for (i = 0; !err && i < calls; i++)
		n += syscall(SYS_getpgid, 0) == -1 && errno == ENOSPC;
	write_text(FAIL_FUNC_DIR "/probability", "0");
	write_text("/proc/self/make-it-fail", "0");
	if (times)
		write_text(FAIL_FUNC_DIR "/times", times);
	free(times);
	return n;
}

/*
 * single_links_cheap: one link per program, attached and then detached one by one. With
 * one ftrace_ops shared by the trampolines, only the last detach unregisters it; with an
 * ops per trampoline, every detach does (and waits for RCU-tasks grace periods).
 */
static void test_single_links_cheap(void)
{
	const char *name = "single_links_cheap";
	long long unreg0 = file_stat(TRAMP_STATS, "ftrace_unregisters"), unreg;
	int links[NFUNCS], i, n = 0, ok = 1;

	if (unreg0 < 0) {
		result(0, name, "cannot read ftrace_unregisters in %s", TRAMP_STATS);
		return;
	}
	for (n = 0; n < NFUNCS; n++) {
		links[n] = fentry_attach(progs[n], n % 2 ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY);
		if (links[n] < 0) {
			printf("# %s: attaching the link for %s failed: %s\n", name, funcs[n],
			       strerror(-links[n]));
			ok = 0;
			break;
		}
	}
	if (!programs_run(name, n, 1))
		ok = 0;
	for (i = 0; i < n; i++)
		close(links[i]);
	if (!programs_run(name, NFUNCS, 0))
		ok = 0;
	if (!enabled_unchanged(name))
		ok = 0;
	unreg = file_stat(TRAMP_STATS, "ftrace_unregisters");
	result(ok && n == NFUNCS && unreg - unreg0 == 1, name,
	       "%d single links detached one by one: %lld unregistrations of an ftrace_ops (want 1: only the last detach)",
	       n, unreg - unreg0);
}

/*
 * Attach the fexit program @prog, alone or (@batch) in a batch with the fentry program
 * progs[0], and hold its function @func with fail_function's IPMODIFY kprobe, in the order
 * @kprobe_first; check that both attach and that the program counts (slot @sl) every one
 * of @calls calls of getpgid. A batch attached after the kprobe must have been registered
 * twice (two ftrace updates): once refused by the trampoline's ops_func, which wants the
 * fexit image built for sharing, and once with that image. 1 if all held, 0 (said why).
 */
static int ipmodify_pair(const char *name, int prog, const char *func, int sl,
			 int kprobe_first, int batch)
{
	int link = -1, held = 0, ok = 0, i, err, calls = 10;
	uint32_t fds[2] = { prog, progs[0] }, idx;
	long long updates = file_stat(TRAMP_STATS, "ftrace_updates");
	uint64_t before;

	if (kprobe_first) {
		held = !fail_function_hold(func, 1);
		if (!held) {
			printf("# %s: fail_function on %s failed\n", name, func);
			goto out;
		}
		/* Control: the injection reaches the caller without a program. */
		i = injected_calls(name, func, calls);
		if (i != calls) {
			printf("# %s: without the fexit program %d of %d calls failed with "
			       "ENOSPC\n", name, i, calls);
			goto out;
		}
	}
	link = batch ? batch_attach(fds, 2, 0, &idx) : fentry_attach(prog, BPF_TRACE_FEXIT);
	if (link < 0) {
		printf("# %s: fexit %s on %s %s fail_function: %s\n", name,
		       batch ? "program in a batch" : "link", func,
		       kprobe_first ? "after" : "before", strerror(-link));
		goto out;
	}
	updates = file_stat(TRAMP_STATS, "ftrace_updates") - updates;
	if (batch && kprobe_first && updates != 2) {
		printf("# %s: the batch after fail_function took %lld ftrace updates, want 2 "
		       "(refused for sharing, then registered)\n", name, updates);
		goto out;
	}
	if (!kprobe_first) {
		err = fail_function_hold(func, 1);
		held = !err;
		if (!held) {
			printf("# %s: fail_function on %s with the fexit %s attached: %s\n",
			       name, func, batch ? "program's batch" : "link", strerror(-err));
			goto out;
		}
	}
	before = slot(sl);
	for (i = 0; i < calls; i++)
		syscall(SYS_getpgid, 0);
	ok = slot(sl) - before == (uint64_t)calls;
	if (!ok) {
		printf("# %s: %s first: the program counted %llu of %d calls\n", name,
		       kprobe_first ? "fail_function" : "fexit",
		       (unsigned long long)(slot(sl) - before), calls);
		goto out;
	}
	/* Injecting: the function returns fail_function's value, and fexit still runs. */
	before = slot(sl);
	i = injected_calls(name, func, calls);
	ok = i == calls && slot(sl) - before == (uint64_t)calls;
	if (!ok)
		printf("# %s: %s first: %d of %d calls failed with ENOSPC and the program "
		       "counted %llu\n", name, kprobe_first ? "fail_function" : "fexit", i,
		       calls, (unsigned long long)(slot(sl) - before));
out:
	if (held && fail_function_hold(func, 0)) {
		printf("# %s: releasing %s from fail_function failed\n", name, func);
		ok = 0;
	}
	if (link >= 0)
		close(link);
	return ok;
}

/*
 * ipmodify_share: a single fexit link shares its function with an IPMODIFY user
 * (fail_function's kprobe, probability 0), registered after the link (ftrace asks the
 * trampoline's ops_func for the peer) and before it (for itself: the trampoline is built
 * again for sharing). A single fentry link elsewhere stays attached throughout, so that the
 * link under test is added to an ftrace_ops that is already registered.
 */
/*
 * The fexit program of the ipmodify tests, on the getpgid stub (@func, FUNC_LEN bytes),
 * counting in slot NFUNCS: its fd, or -1 after the failed result of test @name.
 */
#define FUNC_LEN	64
static int ipmodify_prog(const char *name, char *func)
{
	int prog;

	/* Not one of funcs[]; a stub that takes arguments, as BTF has it (getppid's not). */
	snprintf(func, FUNC_LEN, STUB_PREFIX "getpgid");
	if (access(FAIL_FUNC_DIR "/inject", W_OK) || !btf_func_id(&bf, func)) {
		result(0, name, "needs %s (CONFIG_FAIL_FUNCTION) and %s in the vmlinux BTF",
		       FAIL_FUNC_DIR "/inject", func);
		return -1;
	}
	prog = fentry_load(BPF_TRACE_FEXIT, btf_func_id(&bf, func), map, NFUNCS, verifier_log,
			   sizeof(verifier_log));
	if (prog < 0) {
		result(0, name, "loading the fexit program on %s failed: %s: %.200s", func,
		       strerror(-prog), verifier_log);
		return -1;
	}
	return prog;
}

static void test_ipmodify_share(void)
{
	const char *name = "ipmodify_share";
	char func[FUNC_LEN];
	int prog, other, ok;

	prog = ipmodify_prog(name, func);
	if (prog < 0)
		return;
	ok = ipmodify_pair(name, prog, func, NFUNCS, 0, 0);
	other = fentry_attach(progs[0], BPF_TRACE_FENTRY);
	if (other < 0)
		printf("# %s: the fentry link on %s failed: %s\n", name, funcs[0],
		       strerror(-other));
	ok = ipmodify_pair(name, prog, func, NFUNCS, 1, 0) && other >= 0 && ok;
	if (other >= 0)
		close(other);
	close(prog);
	result(ok && enabled_unchanged(name), name, NULL);
}

/*
 * batch_ipmodify_share: as ipmodify_share, the fexit program in a batch (with the fentry
 * program of funcs[0]): the trampolines' shared ftrace_ops asks the trampoline's ops_func
 * for an IPMODIFY user registered after the batch (peer), and the batch is attached again
 * after its image was built for sharing when the user came first (self).
 */
static void test_batch_ipmodify_share(void)
{
	const char *name = "batch_ipmodify_share";
	char func[FUNC_LEN];
	int prog, ok;

	prog = ipmodify_prog(name, func);
	if (prog < 0)
		return;
	ok = ipmodify_pair(name, prog, func, NFUNCS, 0, 1);
	ok = ipmodify_pair(name, prog, func, NFUNCS, 1, 1) && ok;
	close(prog);
	result(ok && enabled_unchanged(name), name, NULL);
}

/*
 * 1 if the program of funcs[@i] runs on a call of its function (@run) or does not (!@run);
 * else 0, said with @what.
 */
static int program_runs(const char *name, int i, int run, const char *what)
{
	uint64_t before = slot(i);

	syscall(nrs[i]);
	if ((slot(i) > before) == !!run)
		return 1;
	printf("# %s: program %d (%s) %s %s\n", name, i, funcs[i], run ? "does not run" : "runs",
	       what);
	return 0;
}

/* 1 if function @fn is in enabled_functions (@on) or is not (!@on); else 0, said with @what. */
static int fn_enabled(const char *name, const char *fn, int on, const char *what)
{
	char *now = tracing_read("enabled_functions");
	int has = now && ftrace_list_has(now, fn);

	free(now);
	if (has == !!on)
		return 1;
	printf("# %s: %s %s enabled_functions %s\n", name, fn, has ? "in" : "not in", what);
	return 0;
}

/* fn_enabled() of funcs[@i]. */
static int function_enabled(const char *name, int i, int on, const char *what)
{
	char fn[64];

	snprintf(fn, sizeof(fn), SYSCALL_PREFIX "%s", funcs[i]);
	return fn_enabled(name, fn, on, what);
}

/* 1 if a program with id @id exists (BPF_PROG_GET_FD_BY_ID), else 0. */
static int prog_alive(uint32_t id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * 1 if the program with id @id is freed within FREED_SECS (the image that called it is
 * freed after RCU-tasks grace periods, seconds under TCG), else 0 (said).
 */
static int prog_freed(const char *name, uint32_t id)
{
	const struct timespec tick = { 0, 100 * 1000000L };
	int i;

	for (i = 0; i < FREED_SECS * 10; i++) {
		if (!prog_alive(id))
			return 1;
		nanosleep(&tick, NULL);
	}
	printf("# %s: program %u still exists %d s after the image that called it was replaced\n",
	       name, id, FREED_SECS);
	return 0;
}

/*
 * Close @link with failslab failing the @n-th allocation of this process from then on
 * (/proc/self/fail-nth, open at @nth): 1 if the close reached it, 0 if it made fewer than
 * @n allocations, -1 (said why) on error.
 */
static int close_faulted(const char *name, int nth, int link, int n)
{
	char text[32];
	ssize_t len;

	snprintf(text, sizeof(text), "%d", n);
	if (pwrite(nth, text, strlen(text), 0) < 0) {
		printf("# %s: fail-nth: %s\n", name, strerror(errno));
		close(link);
		return -1;
	}
	close(link);
	len = pread(nth, text, sizeof(text) - 1, 0);
	text[len > 0 ? len : 0] = '\0';
	if (!atoi(text))
		return 1;
	pwrite(nth, "0", 1, 0);
	return 0;
}

/*
 * Phase 1 of single_detach_fails: a fentry program on funcs[2] that only its link holds,
 * for every n the detach reaches. 1 if all held, 0 (said why); *@tried and *@failed count
 * the faults made and the detaches they failed.
 */
static int detach_fails_fentry(const char *name, int nth, int *tried, int *failed)
{
	struct bpf_prog_info info;
	int prog, link, n, r, ok = 1;

	for (n = 1; n <= 64 && ok; n++) {
		prog = fentry_load(BPF_TRACE_FENTRY, btf_ids[2], map, 2, verifier_log,
				   sizeof(verifier_log));
		memset(&info, 0, sizeof(info));
		if (prog < 0 || prog_info_by_fd(prog, &info)) {
			printf("# %s: loading a program for %s failed: %s\n", name, funcs[2],
			       strerror(prog < 0 ? -prog : errno));
			return 0;
		}
		link = fentry_attach(prog, BPF_TRACE_FENTRY);
		close(prog);	/* the link holds it */
		if (link < 0) {
			printf("# %s: attaching %s (fault %d) failed: %s\n", name, funcs[2], n,
			       strerror(-link));
			return 0;
		}
		r = close_faulted(name, nth, link, n);
		if (r < 0)
			return 0;
		if (!r)		/* the detach made fewer than n allocations: all were tried */
			return function_enabled(name, 2, 0, "after a detach without faults");
		(*tried)++;
		if (function_enabled(name, 2, 0, "")) {
			ok = program_runs(name, 2, 0, "after its detach");
			continue;
		}
		printf("# %s: allocation %d failed the detach: %s stays attached\n", name, n,
		       funcs[2]);
		(*failed)++;
		/* Its image still calls it: the program must outlive its link. */
		if (!prog_alive(info.id)) {
			printf("# %s: program %u, which the kept image calls, was freed\n", name,
			       info.id);
			return 0;
		}
		ok = program_runs(name, 2, 1, "in the image of the link whose detach failed");
		link = fentry_attach(progs[2], BPF_TRACE_FENTRY);
		if (link < 0) {
			printf("# %s: attaching %s again failed: %s\n", name, funcs[2],
			       strerror(-link));
			return 0;
		}
		ok = program_runs(name, 2, 1, "after it was attached again") && ok;
		/* The new link's attach retired the image that called it: it goes too. */
		ok = prog_freed(name, info.id) && ok;
		close(link);
		ok = function_enabled(name, 2, 0, "after the new link was detached") && ok;
		ok = program_runs(name, 2, 0, "after the new link was detached") && ok;
	}
	return ok;
}

/*
 * Phase 2: the fexit program of the ipmodify tests (it calls the function: CALL_ORIG) kept
 * by a failed detach; fail_function's IPMODIFY kprobe on that function must then be
 * refused (the kept image cannot be rebuilt for sharing), not hang, and a new fexit link
 * must take the function over and share it with fail_function. 1 if all held, 0.
 */
static int detach_fails_ipmodify(const char *name, int nth)
{
	char func[FUNC_LEN];
	int prog, link, n, r, err, kept = 0, ok = 1;

	prog = ipmodify_prog(name, func);
	if (prog < 0)
		return -1;	/* result() given */
	for (n = 1; n <= 64 && !kept; n++) {
		link = fentry_attach(prog, BPF_TRACE_FEXIT);
		if (link < 0) {
			printf("# %s: fexit on %s (fault %d): %s\n", name, func, n, strerror(-link));
			close(prog);
			return 0;
		}
		r = close_faulted(name, nth, link, n);
		if (r <= 0) {
			printf("# %s: no allocation failed the detach of the fexit link on %s\n",
			       name, func);
			close(prog);
			return 0;
		}
		kept = !fn_enabled(name, func, 0, "");
	}
	err = fail_function_hold(func, 1);
	if (!err) {
		printf("# %s: fail_function attached to %s, whose kept image calls it without sharing\n",
		       name, func);
		fail_function_hold(func, 0);
		ok = 0;
	} else if (err != -EBUSY) {
		printf("# %s: fail_function on %s with a kept image: %s, want EBUSY\n", name,
		       func, strerror(-err));
		ok = 0;
	}
	link = fentry_attach(prog, BPF_TRACE_FEXIT);
	if (link < 0) {
		printf("# %s: fexit on %s after the kept image: %s\n", name, func, strerror(-link));
		close(prog);
		return 0;
	}
	err = fail_function_hold(func, 1);
	if (err) {
		printf("# %s: fail_function on %s with a new fexit link: %s\n", name, func,
		       strerror(-err));
		ok = 0;
	} else if (fail_function_hold(func, 0)) {
		ok = 0;
	}
	close(link);
	close(prog);
	return ok && fn_enabled(name, func, 0, "after the new fexit link was detached");
}

/*
 * single_detach_fails: the n-th allocation of a detach fails, for n = 1, 2, ... until the
 * detach makes no n-th allocation (failslab through /proc/self/fail-nth, allocations that
 * may sleep included), while the link of funcs[0] keeps the shared ftrace_ops registered,
 * so that the detach is a change of the ops' filter. Phase 1: detach_fails_fentry(); a
 * detach that fails must leave the function calling its image and the program alive and
 * running, and a new link must attach, run and detach. Phase 2: detach_fails_ipmodify().
 * Closing a link reports no error, so the function's presence in enabled_functions tells
 * whether the detach failed.
 */
static void test_single_detach_fails(void)
{
	const char *name = "single_detach_fails";
	char gfp_wait[8] = "Y", verbose[8] = "2", *s;
	int keep, nth, tried = 0, failed = 0, ok, ok2;

	s = text_read(FAILSLAB_DIR "/ignore-gfp-wait");
	if (!s) {
		result(0, name, "no %s: CONFIG_FAILSLAB (qemu/config/x86_64.config)", FAILSLAB_DIR);
		return;
	}
	snprintf(gfp_wait, sizeof(gfp_wait), "%.1s", s);
	free(s);
	s = text_read(FAILSLAB_DIR "/verbose");
	if (s)
		snprintf(verbose, sizeof(verbose), "%.1s", s);
	free(s);
	nth = open("/proc/self/fail-nth", O_RDWR);
	keep = fentry_attach(progs[0], BPF_TRACE_FENTRY);
	if (nth < 0 || keep < 0 || write_text(FAILSLAB_DIR "/ignore-gfp-wait", "N") ||
	    write_text(FAILSLAB_DIR "/verbose", "0")) {
		result(0, name, "setup failed: fail-nth %d, link of %s %d: %s", nth, funcs[0],
		       keep, strerror(errno));
		goto out;
	}
	ok = detach_fails_fentry(name, nth, &tried, &failed);
	ok2 = detach_fails_ipmodify(name, nth);
	if (ok2 < 0)
		goto out;
	ok = program_runs(name, 0, 1, "with its link held throughout") && ok && ok2;
	close(keep);
	keep = -1;
	result(ok && tried && enabled_unchanged(name), name,
	       "%d of the detach's allocations made to fail, %d of them failed it", tried, failed);
out:
	if (keep >= 0)
		close(keep);
	if (nth >= 0)
		close(nth);
	write_text(FAILSLAB_DIR "/ignore-gfp-wait", gfp_wait);
	write_text(FAILSLAB_DIR "/verbose", verbose);
}

static void sleeper(void)
{
	const struct timespec ts = { SLEEP_MS / 1000, SLEEP_MS % 1000 * 1000000L };

	/* Never outlive the test, even if it is killed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		syscall(SYS_nanosleep, &ts, NULL);
}

static void test_failed_register_live(void)
{
	const char *name = "failed_register_live";
	char nsleep[64], held_fn[64];
	struct timespec t0, t;
	pid_t kids[NSLEEPERS];
	uint32_t fds[2], idx;
	long base_allocs, allocs, taint0, taint;
	char *tracer, *filter;
	int i, n, fd, st, attempts = 0, wrong = 0, dead = 0, ok, held = 0, probed = 0;
	long long updates;
	uint64_t hits0, hits, seen;
	double secs = 0;

	snprintf(nsleep, sizeof(nsleep), STUB_PREFIX "nanosleep");
	snprintf(held_fn, sizeof(held_fn), STUB_PREFIX "recvmmsg");
	fds[0] = fds[1] = 0;
	if (access(FAIL_FUNC_DIR "/inject", W_OK) ||
	    access(TRACING_DIR "/kprobe_events", W_OK)) {
		result(0, name, "needs %s and %s (CONFIG_FAIL_FUNCTION, CONFIG_KPROBE_EVENTS)",
		       FAIL_FUNC_DIR "/inject", TRACING_DIR "/kprobe_events");
		return;
	}
	tracer = tracing_read("current_tracer");
	filter = tracing_read("set_ftrace_filter");
	n = tracer && filter && !strcmp(tracer, "nop\n") && filter[0] == '#';
	if (!n)
		result(0, name, "current_tracer %.40s, set_ftrace_filter %.40s: want nop and no "
		       "function (the state this test leaves)", tracer ? tracer : "unreadable",
		       filter ? filter : "unreadable");
	free(tracer);
	free(filter);
	if (!n)
		return;
	taint0 = file_long("/proc/sys/kernel/tainted");
	ok = 0;		/* until the attempts have run */
	/* Slot NFUNCS counts the fmod_ret program's runs, slot NFUNCS + 1 the fexit's. */
	if (!btf_func_id(&bf, nsleep) || !btf_func_id(&bf, held_fn)) {
		printf("# %s: %s or %s not in the vmlinux BTF\n", name, nsleep, held_fn);
		goto out;
	}
	n = fentry_load(BPF_MODIFY_RETURN, btf_func_id(&bf, nsleep), map, NFUNCS,
			verifier_log, sizeof(verifier_log));
	fd = fentry_load(BPF_TRACE_FEXIT, btf_func_id(&bf, held_fn), map, NFUNCS + 1,
			 verifier_log, sizeof(verifier_log));
	if (n < 0 || fd < 0) {
		printf("# %s: loading the programs for %s and %s failed: %s: %.200s\n", name,
		       nsleep, held_fn, strerror(n < 0 ? -n : -fd), verifier_log);
		if (n >= 0)
			close(n);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fds[0] = n;
	fds[1] = fd;
	n = fail_function_hold(held_fn, 1);
	held = !n;
	if (!n) {
		probed = 1;	/* undone in any case: a part may have been set */
		n = regs_list_tracers(nsleep, 1);
	}
	if (n) {
		printf("# %s: holding %s with fail_function or tracing %s failed: %s\n", name,
		       held_fn, nsleep, strerror(-n));
		goto out;
	}
	base_allocs = settled_allocations();
	hits0 = slot(NFUNCS);
	for (i = 0; i < NSLEEPERS; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			sleeper();
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	seen = hits0;
	while (attempts < ATTEMPTS && secs < FAIL_SECS) {
		updates = file_stat(TRAMP_STATS, "ftrace_updates");
		fd = batch_attach(fds, 2, 0, &idx);
		updates = file_stat(TRAMP_STATS, "ftrace_updates") - updates;
		attempts++;
		if (fd < 0 || updates != (attempts == 1 ? 2 : 1)) {
			if (!wrong++)
				printf("# attempt %d: %s (err_idx %u) with %lld ftrace updates, want "
				       "attached with %d\n", attempts,
				       fd >= 0 ? "attached" : strerror(-fd), idx, updates,
				       attempts == 1 ? 2 : 1);
		}
		if (fd >= 0)
			close(fd);
		hits = slot(NFUNCS);
		if (hits != seen) {
			/* Nothing may take the images' memory while a caller is inside. */
			seen = hits;
			usleep((SLEEP_MS + 200) * 1000);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		secs = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	}
	hits = slot(NFUNCS) - hits0;
	/* Callers sent into an image are back from the function after one sleep. */
	usleep((SLEEP_MS + 200) * 1000);
	for (i = 0; i < NSLEEPERS; i++) {
		if (kids[i] > 0 && waitpid(kids[i], &st, WNOHANG) == kids[i]) {
			printf("# sleeper %d ended by itself (status %#x)\n", i, st);
			kids[i] = -1;
			dead++;
		}
	}
	for (i = 0; i < NSLEEPERS; i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	}
	ok = 1;
	printf("# %d attempts in %.1f s, %d of them as expected (the first after a failed "
	       "registration); %llu nanosleep calls entered the batches' images\n", attempts,
	       secs, attempts - wrong, (unsigned long long)hits);
	if (wrong || dead || !attempts)
		ok = 0;
	allocs = base_allocs < 0 ? -1 : execmem_wait_below("allocations", base_allocs);
	if (base_allocs < 0) {
		printf("# no " EXECMEM_STATS ": image leak not checked\n");
	} else if (allocs > base_allocs) {
		printf("# execmem allocations %ld, %ld before the attempts\n", allocs, base_allocs);
		ok = 0;
	}
	taint = file_long("/proc/sys/kernel/tainted");
	if (taint != taint0) {
		printf("# kernel taint %#lx, %#lx before the attempts\n", taint, taint0);
		ok = 0;
	}
out:
	if (probed && regs_list_tracers(nsleep, 0) && ok) {
		printf("# removing the kprobe event " KPROBE_EVENT " or the function tracer failed\n");
		ok = 0;
	}
	if (held && fail_function_hold(held_fn, 0) && ok) {
		printf("# releasing %s from fail_function failed\n", held_fn);
		ok = 0;
	}
	for (i = 0; i < 2; i++)
		if (fds[i])
			close(fds[i]);
	if (!enabled_unchanged(name))
		ok = 0;
	result(ok, name, NULL);
}

/* Load progs[] and the map; the reason as a SKIP/failure text in @why on error. */
static int setup(char *why, size_t len)
{
	char fn[64];
	int i;

	if (btf_funcs_load(&bf)) {
		snprintf(why, len, "cannot read the vmlinux BTF");
		return -1;
	}
	map = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint64_t), NFUNCS + 2);
	if (map < 0) {
		snprintf(why, len, "map create failed: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < NFUNCS; i++) {
		int fd;

		snprintf(fn, sizeof(fn), SYSCALL_PREFIX "%s", funcs[i]);
		btf_ids[i] = btf_func_id(&bf, fn);
		if (!btf_ids[i]) {
			snprintf(why, len, "%s not in the vmlinux BTF", fn);
			return -1;
		}
		fd = fentry_load(i % 2 ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY, btf_ids[i], map, i,
				 verifier_log, sizeof(verifier_log));
		if (fd < 0) {
			snprintf(why, len, "loading the program for %s failed: %s: %.200s", fn,
				 strerror(-fd), verifier_log);
			return -1;
		}
		progs[i] = fd;
	}
	enabled_before = tracing_read("enabled_functions");
	if (!enabled_before) {
		snprintf(why, len, "cannot read " TRACING_DIR "/enabled_functions");
		return -1;
	}
	return 0;
}

/* The test functions in the order they run, each with its first case and its case count. */
static const struct {
	const char *name;	/* its first case's name, for only= */
	int ncases;
	void (*run)(void);
	int batch;	/* needs BPF_TRACE_BATCH (or the series' shared ftrace_ops with it) */
} tests[] = {
	{ "attach_fire_detach", 1, test_attach_fire_detach, 1 },
	{ "link_info_members", 1, test_link_info_members, 1 },
	{ "bpftool_link_show", 1, test_bpftool_link_show, 1 },
	{ "bad_fd_in_middle", 1, test_bad_fd_in_middle, 1 },
	{ "wrong_prog_type", 1, test_wrong_prog_type, 1 },
	{ "duplicate_target", 1, test_duplicate_target, 1 },
	{ "target_taken", 1, test_target_taken, 1 },
	{ "count_zero", 5, test_counts_and_pointers, 1 },
	{ "attach_under_load", 1, test_attach_under_load, 1 },
	{ "single_links_cheap", 1, test_single_links_cheap, 1 },
	{ "ipmodify_share", 1, test_ipmodify_share, 1 },
	{ "batch_ipmodify_share", 1, test_batch_ipmodify_share, 1 },
	{ "single_detach_fails", 1, test_single_detach_fails, 0 },
	{ "failed_register_live", 1, test_failed_register_live, 1 },
};

#define NTESTS	(int)(sizeof(tests) / sizeof(tests[0]))

/* Whether tests[@i] runs: @only is NULL (all) or a comma-separated list of tests[] names. */
static int selected(const char *only, int i)
{
	size_t len = strlen(tests[i].name);
	const char *p;

	if (!only)
		return 1;
	for (p = only; (p = strstr(p, tests[i].name)); p += len)
		if ((p == only || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
	return 0;
}

/* Report the cases of tests[@i] skipped: the kernel has no BPF_TRACE_BATCH links. */
static void skip_cases(int i)
{
	int n;

	for (n = 0; n < tests[i].ncases; n++)
		printf("ok %d %s # SKIP kernel without BPF_TRACE_BATCH links "
		       "(no bpf_tracing_batch_link_attach in /proc/kallsyms)\n", ++casenum,
		       tests[i].name);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	char why[512];
	int i, plan = 0;

	/*
	 * Arguments from the kernel command line: bpf_batch.load=1 -> "load=1";
	 * bpf_batch.only=NAME[,NAME] -> "only=...": run only those tests (named by their
	 * first case, as tests[] has them); the plan counts their cases alone.
	 */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "load=1"))
			load_enabled = 1;
		else if (!strncmp(argv[i], "only=", 5))
			only = argv[i] + 5;
	}
	for (i = 0; i < NTESTS; i++)
		plan += selected(only, i) ? tests[i].ncases : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	if (!plan) {
		printf("1..1\nnot ok 1 bpf_batch_only # only=%s names no test of bpf_batch\n",
		       only);
		return 1;
	}
	/*
	 * One skipped case with the reason, which the KTAP parser counts as skipped (named
	 * unlike the test: 6.1's kunit_parser takes "ok 1 bpf_batch" for the end of the
	 * subtest bpf_batch and reports a missing subtest).
	 */
	if (!kallsyms_has("register_ftrace_direct_multi")) {
		printf("1..1\nok 1 batch_links # SKIP no ftrace direct calls on this arch in 6.1 "
		       "(no register_ftrace_direct_multi in /proc/kallsyms)\n");
		return 0;
	}
	/* Before the batch links (the base, patches 2-12) the single-link tests still run. */
	has_batch = kallsyms_has("bpf_tracing_batch_link_attach");
	printf("1..%d\n", plan);
	if (setup(why, sizeof(why))) {
		printf("# setup: %s\n", why);
		for (i = 0; i < plan; i++)
			printf("not ok %d setup_failed\n", i + 1);
		return 1;
	}
	for (i = 0; i < NTESTS; i++) {
		if (!selected(only, i))
			continue;
		if (tests[i].batch && !has_batch)
			skip_cases(i);
		else
			tests[i].run();
	}
	return failures ? 1 : 0;
}
