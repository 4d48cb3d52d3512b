// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace_direct_cow.c - guest test of ftrace's direct_functions hash while it changes.
 *
 * A function with a direct trampoline (a BPF fentry program) that another ftrace_ops also
 * traces (here the function tracer) is called through the ftrace list function, whose
 * call_direct_funcs() looks the trampoline up in direct_functions without a lock. 6.1
 * changes that hash in place: growing it moves every entry out of the live hash (a reader
 * in a bucket follows an entry into the new hash and can miss its function), and detaching
 * a trampoline kfree()s its entry under a reader. The series' first patch makes the hash
 * copy-on-write.
 *
 *   calls_reach_program  two processes (each on a CPU of its own where there are three)
 *                        call getpgrp in a loop; getpgrp has a counting fentry program
 *                        and the function tracer on it. Meanwhile (1) fentry programs on
 *                        the syscall functions whose entries share getpgrp's bucket (for
 *                        the 32-bucket hash a few entries make) are attached one link at a
 *                        time and detached again, round after round, so that getpgrp's
 *                        lookups walk entries that are being freed; (2) fentry programs on
 *                        NFUNCS syscall functions are attached (growing the hash past 128
 *                        entries) and detached. Every getpgrp call must have reached the
 *                        program (run it, or been counted in its recursion_misses when
 *                        another call on that CPU was in it): a lookup that missed lets a
 *                        call through without it. A use-after-free is what KASAN reports
 *                        (make debug); a crash ends the run.
 *
 * The races are windows of a few instructions: a smoke test, which can fail but is not
 * expected to on the unfixed kernel. Skipped, with the reason, without ftrace direct calls
 * (arm64 and riscv64 in 6.1).
 */
#define _GNU_SOURCE
#include "../fentry_raw.h"
#include "../ktap.h"
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NFUNCS		200	/* functions of part 2: the hash grows past 64 and 128 entries */
#define MIN_FUNCS	130	/* fewer than this would not grow it past 128 */
#define MAX_SHARED	8	/* functions of part 1 */
#define SHARED_BITS	5	/* ftrace's hash buckets: 32 while it has up to 63 entries */
#define SHARED_SECS	30	/* how long part 1 goes on */
#define NREADERS	2

#ifdef SYS_getpgrp
#define TARGET_NAME	"getpgrp"
#define TARGET_NR	SYS_getpgrp
#else
#define TARGET_NAME	"getpgid"
#define TARGET_NR	SYS_getpgid
#endif

/*
 * Syscalls the guest may be inside while their entries are patched: waiting (init, the
 * watchdog), this test's own calls and the readers' target. Patching a function that a vCPU
 * is running hangs QEMU 7.2's multi-threaded TCG (see bpf_batch.c), so none is a candidate.
 */
static const char *const busy[] = {
	"read", "write", "bpf", "wait4", "waitid", "nanosleep", "clock_nanosleep", "exit",
	"exit_group", "kill", "rt_sigreturn", "rt_sigaction", "rt_sigprocmask", "futex",
	"select", "pselect6", "poll", "ppoll", "pause", "restart_syscall", "sched_yield",
	"openat", "close", "mmap", "munmap", "brk", "ioctl", "getpgrp", "getpgid",
	"sched_setaffinity", "sched_getaffinity", NULL,
};

struct func {
	char name[64];
	unsigned long addr;	/* from /proc/kallsyms: the ftrace location without IBT */
	uint32_t btf_id;
	int prog, link;
};

struct shared {
	volatile int stop;
	volatile unsigned long calls[NREADERS];
};

static char verifier_log[65536];
static struct func funcs[512];
static int nfuncs;

/* ftrace's bucket of @ip in a hash of 2^@bits buckets (hash_long() on 64-bit). */
static unsigned int bucket(unsigned long ip, int bits)
{
	return (uint64_t)ip * 0x61C8864680B583EBull >> (64 - bits);
}

static int is_busy(const char *syscall_name)
{
	int i;

	for (i = 0; busy[i]; i++)
		if (!strcmp(busy[i], syscall_name))
			return 1;
	return 0;
}

/*
 * The syscall functions' prefixes: SYSCALL_PREFIX and, on x86-64, the __x64_sys_ stubs,
 * which have BTF where pahole emits it for them (most __do_sys_ bodies are inlined).
 */
static const char *const prefixes[] = {
	SYSCALL_PREFIX,
#ifdef __x86_64__
	"__x64_sys_",
#endif
	NULL,
};

/* The length of @fn's syscall prefix, or 0 if it has none. */
static size_t syscall_prefix(const char *fn)
{
	int i;

	for (i = 0; prefixes[i]; i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return strlen(prefixes[i]);
	return 0;
}

/*
 * funcs[]: the syscall functions that ftrace can patch (available_filter_functions) and
 * that have a BTF id and a kallsyms address, the busy ones and @target left out; @target's
 * own entry into *@t. Returns how many.
 */
static int collect(const struct btf_funcs *bf, const char *target, struct func *t)
{
	char *text = tracing_read("available_filter_functions");
	char line[512], sym[256], *save = NULL, *fn;
	unsigned long addr;
	size_t plen;
	FILE *f;
	int i;

	nfuncs = 0;
	if (!text)
		return 0;
	for (fn = strtok_r(text, "\n", &save); fn && nfuncs < (int)(sizeof(funcs) /
	     sizeof(funcs[0])); fn = strtok_r(NULL, "\n", &save)) {
		char *sp = strpbrk(fn, " \t");
		struct func *p = &funcs[nfuncs];

		if (sp)
			*sp = '\0';	/* "name [module]" */
		plen = syscall_prefix(fn);
		if (!plen || strlen(fn) >= sizeof(p->name))
			continue;
		if (strcmp(fn, target) && is_busy(fn + plen))
			continue;
		p = strcmp(fn, target) ? p : t;
		snprintf(p->name, sizeof(p->name), "%s", fn);
		p->btf_id = btf_func_id(bf, fn);
		p->addr = 0;
		p->prog = p->link = -1;
		if (p->btf_id && p != t)
			nfuncs++;
	}
	free(text);
	f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %*c %255s", &addr, sym) != 2 || !syscall_prefix(sym))
			continue;
		if (!strcmp(sym, t->name))
			t->addr = addr;
		for (i = 0; i < nfuncs; i++)
			if (!strcmp(sym, funcs[i].name))
				funcs[i].addr = addr;
	}
	if (f)
		fclose(f);
	return nfuncs;
}

static void reader(struct shared *sh, int i)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	/* A CPU each where there are enough (recursion misses are counted anyway). */
	CPU_ZERO(&set);
	CPU_SET((i + 1) % (ncpus > 0 ? ncpus : 1), &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!sh->stop) {
		syscall(TARGET_NR, 0);
		sh->calls[i]++;
	}
	_exit(0);
}

/*
 * The calls the program @fd skipped because it was already running on that CPU (a fentry
 * program does not nest: prog->active), or -1 if the kernel does not say.
 */
static long long recursion_misses(int fd)
{
	struct bpf_prog_info info;

	memset(&info, 0, sizeof(info));
	if (prog_info_by_fd(fd, &info))
		return -1;
	return info.recursion_misses;
}

/* Attach the programs of @idx[0..@n-1] one link at a time: 0, or -1 with a message. */
static int attach_all(const int *idx, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct func *p = &funcs[idx[i]];

		p->link = fentry_attach(p->prog, BPF_TRACE_FENTRY);
		if (p->link < 0) {
			printf("# attaching to %s failed: %s\n", p->name, strerror(-p->link));
			return -1;
		}
	}
	return 0;
}

static void detach_all(const int *idx, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		struct func *p = &funcs[idx[i]];

		if (p->link >= 0)
			close(p->link);
		p->link = -1;
	}
}

static void test_calls_reach_program(int map)
{
	const char *name = "calls_reach_program";
	static int shared_idx[MAX_SHARED], all_idx[NFUNCS];
	int nshared = 0, nall = 0, rounds = 0, i, ok = 1;
	struct func t = { .prog = -1, .link = -1 };
	pid_t kids[NREADERS] = { 0 };
	struct shared *sh = MAP_FAILED;
	uint64_t seen = 0, made = 0;
	long long missed;
	struct btf_funcs bf;
	char fn[64];
	time_t t0;

	if (btf_funcs_load(&bf)) {
		result(0, name, "cannot read the vmlinux BTF");
		return;
	}
	snprintf(fn, sizeof(fn), SYSCALL_PREFIX "%s", TARGET_NAME);
	collect(&bf, fn, &t);
	if (!t.btf_id || !t.addr || nfuncs < MIN_FUNCS) {
		result(0, name, "%s: BTF id %u, address %#lx; %d other syscall functions, want %d",
		       fn, t.btf_id, t.addr, nfuncs, MIN_FUNCS);
		goto cleanup;
	}
	for (i = 0; i < nfuncs; i++) {
		if (nshared < MAX_SHARED && funcs[i].addr &&
		    bucket(funcs[i].addr, SHARED_BITS) == bucket(t.addr, SHARED_BITS))
			shared_idx[nshared++] = i;
		else if (nall < NFUNCS)
			all_idx[nall++] = i;
	}
	printf("# %d functions share %s's bucket, %d more to grow the hash\n", nshared, fn,
	       nall);
	t.prog = fentry_load(BPF_TRACE_FENTRY, t.btf_id, map, 0, verifier_log,
			     sizeof(verifier_log));
	for (i = 0; i < nshared + nall && t.prog >= 0; i++) {
		struct func *p = &funcs[i < nshared ? shared_idx[i] : all_idx[i - nshared]];

		p->prog = fentry_load(BPF_TRACE_FENTRY, p->btf_id, map, 1, verifier_log,
				      sizeof(verifier_log));
		if (p->prog < 0) {
			result(0, name, "loading the program for %s failed: %s: %.200s",
			       p->name, strerror(-p->prog), verifier_log);
			goto cleanup;
		}
	}
	if (t.prog < 0) {
		result(0, name, "loading the program for %s failed: %s: %.200s", fn,
		       strerror(-t.prog), verifier_log);
		goto cleanup;
	}
	t.link = fentry_attach(t.prog, BPF_TRACE_FENTRY);
	if (t.link < 0) {
		result(0, name, "attaching to %s failed: %s", fn, strerror(-t.link));
		goto cleanup;
	}
	/* The function tracer on the same function: calls go through the list function. */
	if (tracing_write("set_ftrace_filter", fn) || tracing_write("current_tracer", "function")) {
		result(0, name, "cannot enable the function tracer on %s", fn);
		goto cleanup;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		result(0, name, "mmap: %s", strerror(errno));
		goto cleanup;
	}
	memset((void *)sh, 0, sizeof(*sh));
	for (i = 0; i < NREADERS; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			reader(sh, i);
	}
	t0 = time(NULL);
	while (ok && nshared && time(NULL) - t0 < SHARED_SECS) {
		ok = !attach_all(shared_idx, nshared);
		detach_all(shared_idx, nshared);
		rounds++;
	}
	printf("# part 1: %d rounds in %ld s\n", rounds, (long)(time(NULL) - t0));
	t0 = time(NULL);
	if (ok)
		ok = !attach_all(all_idx, nall);
	detach_all(all_idx, nall);
	printf("# part 2: %d links in %ld s\n", nall, (long)(time(NULL) - t0));
	sh->stop = 1;
	for (i = 0; i < NREADERS; i++) {
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
		made += sh->calls[i];
	}
	map_lookup(map, 0, &seen);
	missed = recursion_misses(t.prog);
	printf("# %s: %llu calls made, %llu ran the program, %lld skipped it as nested\n", fn,
	       (unsigned long long)made, (unsigned long long)seen, missed);
	if (missed < 0) {
		ok = 0;
		printf("# cannot read the program's recursion_misses\n");
	} else {
		seen += missed;
	}
	/* Each reader counts a call after making it, and makes none after the stop flag. */
	result(ok && made > 0 && seen == made, name, seen == made ? NULL :
	       "%lld calls more than reached the program", (long long)(made - seen));
cleanup:
	tracing_write("current_tracer", "nop");
	tracing_write("set_ftrace_filter", "\n");
	tracing_write("trace", "");
	if (t.link >= 0)
		close(t.link);
	if (sh != MAP_FAILED)
		munmap((void *)sh, sizeof(*sh));
	for (i = 0; i < nfuncs; i++)
		if (funcs[i].prog >= 0)
			close(funcs[i].prog);
	if (t.prog >= 0)
		close(t.prog);
	free(bf.data);
	free(bf.ids);
	free(bf.names);
	free(bf.nargs);
}

int main(void)
{
	int map;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	/* Named unlike the test: see bpf_batch.c on 6.1's kunit_parser. */
	if (!kallsyms_has("register_ftrace_direct_multi")) {
		printf("1..1\nok 1 calls_reach_program # SKIP no ftrace direct calls on this "
		       "arch in 6.1 (no register_ftrace_direct_multi in /proc/kallsyms)\n");
		return 0;
	}
	printf("1..1\n");
	map = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint64_t), 2);
	if (map < 0) {
		result(0, "calls_reach_program", "map create failed: %s", strerror(errno));
		return 1;
	}
	test_calls_reach_program(map);
	close(map);
	return failures ? 1 : 0;
}
