// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_tramp_execmem.c - guest test of BPF trampolines whose text comes from execmem.
 *
 * Cases (KTAP), each loaded with raw bpf(2):
 *
 *   fentry_fires      an fentry program on getpid's syscall body, attached alone, counts
 *                     three getpid() calls; after close() it counts no more. SKIP where 6.1
 *                     has no trampolines on kernel functions (no ftrace direct calls: no
 *                     register_ftrace_direct_multi in /proc/kallsyms, arm64 and riscv64).
 *   tramp_in_execmem  the attach adds exactly one execmem allocation; the trampoline's
 *                     symbol (the bpf_trampoline_KEY of /proc/kallsyms the attach added) lies
 *                     inside an execmem chunk (/proc/vmallocinfo, caller
 *                     execmem_chunk_create); after close()
 *                     the allocation is freed again (after an RCU tasks grace period). SKIP
 *                     as fentry_fires, and on kernels whose trampolines do not use execmem
 *                     (no bpf_tramp_text_alloc in /proc/kallsyms: the base, early patches).
 *   struct_ops_run    a struct_ops program for bpf_dummy_ops.test_2 returning a1 + a4, run
 *                     by BPF_PROG_TEST_RUN through a trampoline the kernel generates and
 *                     frees per run: returns 20 + 5000. SKIP on riscv64 (6.1 has no BPF
 *                     trampolines there).
 *
 * Run before wx_check, which then finds no writable and executable mapping they left.
 */
#define _GNU_SOURCE
#include <time.h>
#include "../fentry_raw.h"
#include "../ktap.h"

static char logbuf[65536];

/*
 * The bpf_trampoline_KEY symbols of /proc/kallsyms as "name\n" lines (malloc()ed), to tell
 * which one an attach added: the key holds the BTF object id of vmlinux, which depends on
 * the order BTF objects were registered in.
 */
static char *tramp_syms(void)
{
	char line[512], sym[256], *list = calloc(1, 1);
	size_t len = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && list && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*c %255s", sym) != 1 || strncmp(sym, "bpf_trampoline_", 15))
			continue;
		list = realloc(list, len + strlen(sym) + 2);
		if (list)
			len += sprintf(list + len, "%s\n", sym);
	}
	if (f)
		fclose(f);
	return list;
}

/* Name and address of a bpf_trampoline_ symbol not listed in @before; 0 if none. */
static unsigned long long new_tramp(const char *before, char *name, size_t size)
{
	char line[512], sym[256], want[260];
	unsigned long long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && !found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*c %255s", &addr, sym) != 2 ||
		    strncmp(sym, "bpf_trampoline_", 15))
			continue;
		snprintf(want, sizeof(want), "%s\n", sym);
		if (!before || !strstr(before, want)) {
			snprintf(name, size, "%s", sym);
			found = addr;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Write @val to the sysctl file @path; 0 or -1. */
static int sysctl_write(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -1;
	err = fputs(val, f) < 0;
	return fclose(f) || err ? -1 : 0;
}

/*
 * Whether @addr lies in a vmalloc area of execmem_chunk_create (/proc/vmallocinfo). That
 * file prints %pK addresses, hashed under kptr_restrict 0: set 1 (root has CAP_SYSLOG, so
 * it sees real addresses) for the read, then restore 0, the guest's default.
 */
static int in_execmem_chunk(unsigned long long addr)
{
	const char *kptr = "/proc/sys/kernel/kptr_restrict";
	char line[512];
	unsigned long long start, end;
	int found = 0;
	FILE *f;

	if (sysctl_write(kptr, "1"))
		printf("# cannot set %s: vmallocinfo addresses may be hashed\n", kptr);
	f = fopen("/proc/vmallocinfo", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "execmem_chunk_create") &&
			sscanf(line, "0x%llx-0x%llx", &start, &end) == 2 &&
			addr >= start && addr < end;
	if (f)
		fclose(f);
	sysctl_write(kptr, "0");
	return found;
}

static uint64_t count_of(int map)
{
	uint64_t v = 0;

	map_lookup(map, 0, &v);
	return v;
}

static void fentry_cases(void)
{
	char name[64], sym[256] = "(none)", *before_syms;
	struct btf_funcs bf;
	long before, attached, after;
	unsigned long long addr;
	uint32_t id;
	int map = -1, prog = -1, link = -1, i, inside;
	int execmem = kallsyms_has("bpf_tramp_text_alloc");
	uint64_t fired, later;

	if (!kallsyms_has("register_ftrace_direct_multi")) {
		printf("ok %d fentry_fires # SKIP no trampolines on kernel functions on this arch in 6.1 (no register_ftrace_direct_multi in /proc/kallsyms)\n",
		       ++casenum);
		printf("ok %d tramp_in_execmem # SKIP as fentry_fires\n", ++casenum);
		return;
	}
	snprintf(name, sizeof(name), SYSCALL_PREFIX "getpid");
	if (btf_funcs_load(&bf) || !(id = btf_func_id(&bf, name))) {
		result(0, "fentry_fires", "%s not found in the vmlinux BTF", name);
		result(0, "tramp_in_execmem", "as fentry_fires");
		return;
	}
	map = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint64_t), 1);
	prog = fentry_load(BPF_TRACE_FENTRY, id, map, 0, logbuf, sizeof(logbuf));
	before = settled_allocations();
	before_syms = tramp_syms();
	link = prog < 0 ? -1 : fentry_attach(prog, BPF_TRACE_FENTRY);
	if (map < 0 || prog < 0 || link < 0) {
		result(0, "fentry_fires", "map %d, load %d, attach %d: %.300s", map, prog, link,
		       logbuf);
		result(0, "tramp_in_execmem", "as fentry_fires");
		free(before_syms);
		goto out;
	}
	attached = settled_allocations();
	addr = new_tramp(before_syms, sym, sizeof(sym));
	free(before_syms);
	inside = addr && in_execmem_chunk(addr);	/* while attached */
	for (i = 0; i < 3; i++)
		syscall(SYS_getpid);
	fired = count_of(map);
	close(link);
	link = -1;
	for (i = 0; i < 3; i++)
		syscall(SYS_getpid);
	later = count_of(map);
	result(fired == 3 && later == 3, "fentry_fires",
	       "count %llu after 3 getpid() attached, %llu after 3 more detached (want 3, 3)",
	       (unsigned long long)fired, (unsigned long long)later);
	if (!execmem) {
		printf("ok %d tramp_in_execmem # SKIP trampolines not on execmem in this kernel (no bpf_tramp_text_alloc in /proc/kallsyms)\n",
		       ++casenum);
		goto out;
	}
	after = settled_allocations();
	result(before >= 0 && attached == before + 1 && inside && after == before,
	       "tramp_in_execmem",
	       "execmem allocations %ld before attach, %ld attached, %ld after close (want n, n + 1, n); %s at %llx %s an execmem chunk",
	       before, attached, after, sym, addr, inside ? "inside" : "NOT inside");
out:
	if (prog >= 0)
		close(prog);
	if (map >= 0)
		close(map);
}

static void struct_ops_run(void)
{
	uint64_t args[5] = { 0, 20, 300, 4, 5000 };
	uint32_t ret;
	int fd, err;

#ifdef __riscv
	printf("ok %d struct_ops_run # SKIP no BPF trampolines on riscv64 in 6.1\n", ++casenum);
	return;
#endif
	fd = dummy_ops_load(logbuf, sizeof(logbuf));
	if (fd == -ENOENT) {
		result(0, "struct_ops_run", "no struct bpf_dummy_ops with test_2 in the vmlinux BTF");
		return;
	}
	if (fd < 0) {
		result(0, "struct_ops_run", "load: %s: %.300s", strerror(-fd), logbuf);
		return;
	}
	err = ctx_test_run(fd, args, sizeof(args), -1, &ret);
	if (err)
		result(0, "struct_ops_run", "BPF_PROG_TEST_RUN: %s", strerror(-err));
	else
		result(ret == 5020, "struct_ops_run",
		       "test_2(NULL, 20, 300, 4, 5000) returned %u (want 5020)", ret);
	close(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..3\n");
	fentry_cases();
	struct_ops_run();
	return failures ? 1 : 0;
}
