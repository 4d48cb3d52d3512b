// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_percpu.c - guest test of per-CPU BPF access through the raw bpf(2) syscall.
 *
 * Static, libc only (no libbpf: riscv64 has no Debian userspace), so it runs on every
 * arch. Prints KTAP. Each case loads a small raw tracepoint program and runs it with
 * BPF_PROG_TEST_RUN and BPF_F_TEST_RUN_ON_CPU on every online CPU:
 *
 *   smp_processor_id        bpf_get_smp_processor_id() returns the CPU it runs on
 *   global_array_by_cpu     array[cpu]++ on a plain array lands in that CPU's element
 *   percpu_array_slot       a per-CPU array increment lands in the running CPU's slot
 *   percpu_hash_slot        the same for a per-CPU hash
 *   percpu_array_oob        a lookup past max_entries gives NULL
 *   internal_mov_rejected   the kernel-internal per-CPU MOV encoding (ALU64 MOV X with
 *                           off = -1) is refused with EINVAL when user space loads it
 *
 * These hold on the base and must keep holding when the series inlines the helper and the
 * lookups. (Whether the inlining happened is a question for the series' own tests: arm64
 * and riscv64 inline the helper in the JIT, so the xlated program keeps its call there.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i)		INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s)		INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, i)		INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LSH64_IMM(d, i)		INSN(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i)
#define RSH64_IMM(d, i)		INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define ST_W(d, o, i)		INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define STX_W(d, s, o)		INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define LDX_DW(d, s, o)		INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_DW(d, s, o)		INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define JEQ_IMM(d, i, o)	INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f)			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* 16-byte map fd load: r_d = map */
#define LD_MAP_FD(d, fd)	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), \
				INSN(0, 0, 0, 0, 0)

static int ncpus;	/* online CPUs, assumed to be 0..ncpus-1 */
static int npossible;	/* possible CPUs: per-CPU map values come in this many slots */
static int casenum;
static int failures;
static char verifier_log[65536];

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Number of CPUs in a list like "0-3" or "0,2-3" from sysfs; 0 on error. */
static int count_cpus(const char *path)
{
	char buf[256], *p = buf;
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			return 0;	/* not a CPU list */
		p = end;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		n += b - a + 1;
		if (*p == ',')
			p++;
	}
	return n;
}

static void result(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		printf("# %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	printf("%s %d %s\n", ok ? "ok" : "not ok", ++casenum, name);
	if (!ok)
		failures++;
	fflush(stdout);
}

static int map_create(enum bpf_map_type type, int value_size, int max_entries)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = max_entries;
	return sys_bpf(BPF_MAP_CREATE, &a);
}

static int map_lookup(int fd, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
}

static int map_update(int fd, uint32_t key, const void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/* Load a raw tracepoint program; returns the fd or -errno, verifier log kept on error. */
static int prog_load(const struct bpf_insn *insns, int n)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)verifier_log;
	a.log_size = sizeof(verifier_log);
	a.log_level = 1;
	verifier_log[0] = '\0';
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

/* Run @fd once on @cpu; returns 0 and the program's return value in *@ret, or -errno. */
static int prog_run_on(int fd, int cpu, uint32_t *ret)
{
	uint64_t ctx[1] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = fd;
	a.test.ctx_in = (uintptr_t)ctx;
	a.test.ctx_size_in = sizeof(ctx);
	a.test.flags = BPF_F_TEST_RUN_ON_CPU;
	a.test.cpu = cpu;
	if (sys_bpf(BPF_PROG_TEST_RUN, &a))
		return -errno;
	*ret = a.test.retval;
	return 0;
}

static void print_log(void)
{
	char *line, *save;
	int n = 0;

	for (line = strtok_r(verifier_log, "\n", &save); line && n < 20;
	     line = strtok_r(NULL, "\n", &save), n++)
		printf("#   %s\n", line);
}

static void test_smp_processor_id(void)
{
	const struct bpf_insn prog[] = {
		CALL(BPF_FUNC_get_smp_processor_id),
		EXIT(),
	};
	int fd = prog_load(prog, 2), cpu, bad = 0;
	uint32_t ret = 0;

	if (fd < 0) {
		print_log();
		result(0, "smp_processor_id", "load failed: %s", strerror(-fd));
		return;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		int err = prog_run_on(fd, cpu, &ret);

		if (err || ret != (uint32_t)cpu) {
			printf("# cpu %d: err %d, returned %u\n", cpu, err, ret);
			bad++;
		}
	}
	close(fd);
	result(!bad, "smp_processor_id", "%d CPUs, %d wrong", ncpus, bad);
}

/*
 * Program: r0 = lookup(map, key) with key = cpu (by_cpu) or @key; if r0: *(u64 *)r0 += 1;
 * return r0 == NULL.
 */
static int load_inc_prog(int map_fd, int by_cpu, int key)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(BPF_REG_0, key),
		CALL(BPF_FUNC_get_smp_processor_id),
		STX_W(BPF_REG_10, BPF_REG_0, -4),
		LD_MAP_FD(BPF_REG_1, map_fd),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 4),
		LDX_DW(BPF_REG_1, BPF_REG_0, 0),
		ADD64_IMM(BPF_REG_1, 1),
		STX_DW(BPF_REG_0, BPF_REG_1, 0),
		MOV64_IMM(BPF_REG_0, 1),
		/* r0 is 0 here exactly when the lookup gave NULL: return 1 for NULL */
		INSN(BPF_ALU64 | BPF_XOR | BPF_K, BPF_REG_0, 0, 0, 1),
		EXIT(),
	};

	if (!by_cpu) {
		/* replace "r0 = cpu" with "*(u32 *)(r10 - 4) = key" */
		prog[1] = ST_W(BPF_REG_10, -4, key);
		prog[2] = MOV64_IMM(BPF_REG_0, 0);
	}
	return prog_load(prog, sizeof(prog) / sizeof(prog[0]));
}

/* Run the increment program (run k times on CPU k-1) and check the map's slots. */
static void test_inc(const char *name, enum bpf_map_type type, int by_cpu)
{
	int percpu = type != BPF_MAP_TYPE_ARRAY;
	int entries = percpu ? 4 : ncpus;
	int slots = percpu ? npossible : 1;
	uint64_t *val = calloc(slots, sizeof(*val));
	int map, fd, cpu, i, bad = 0;
	uint32_t ret;

	map = map_create(type, sizeof(uint64_t), entries);
	if (map < 0) {
		result(0, name, "map create failed: %s", strerror(errno));
		free(val);
		return;
	}
	if (type == BPF_MAP_TYPE_PERCPU_HASH && map_update(map, 1, val)) {
		result(0, name, "map update failed: %s", strerror(errno));
		goto out_map;
	}
	fd = load_inc_prog(map, by_cpu, 1);
	if (fd < 0) {
		print_log();
		result(0, name, "load failed: %s", strerror(-fd));
		goto out_map;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i <= cpu; i++)
			if (prog_run_on(fd, cpu, &ret) || ret != 0)
				bad++;
	if (bad)
		printf("# %d runs failed or found no element\n", bad);
	for (cpu = 0; cpu < ncpus; cpu++) {
		uint64_t got;

		if (map_lookup(map, by_cpu ? cpu : 1, val)) {
			bad++;
			continue;
		}
		got = percpu ? val[cpu] : val[0];
		if (got != (uint64_t)cpu + 1) {
			printf("# cpu %d: slot holds %llu, want %d\n", cpu,
			       (unsigned long long)got, cpu + 1);
			bad++;
		}
	}
	close(fd);
	result(!bad, name, "%d CPUs, %d errors", ncpus, bad);
out_map:
	close(map);
	free(val);
}

static void test_percpu_array_oob(void)
{
	int map = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(uint64_t), 4);
	int fd, cpu, bad = 0;
	uint32_t ret;

	if (map < 0) {
		result(0, "percpu_array_oob", "map create failed: %s", strerror(errno));
		return;
	}
	fd = load_inc_prog(map, 0, 4);	/* key == max_entries */
	if (fd < 0) {
		print_log();
		result(0, "percpu_array_oob", "load failed: %s", strerror(-fd));
		close(map);
		return;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		if (prog_run_on(fd, cpu, &ret) || ret != 1)
			bad++;
	close(fd);
	close(map);
	result(!bad, "percpu_array_oob", "lookup of key 4 in a 4-entry map: %d non-NULL", bad);
}

static void test_internal_mov_rejected(void)
{
	const struct bpf_insn prog[] = {
		MOV64_IMM(BPF_REG_0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_10, -1, 0),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	int fd = prog_load(prog, 4);

	if (fd >= 0)
		close(fd);
	result(fd == -EINVAL, "internal_mov_rejected", "load returned %s",
	       fd >= 0 ? "a program fd" : strerror(-fd));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpus = count_cpus("/sys/devices/system/cpu/online");
	npossible = count_cpus("/sys/devices/system/cpu/possible");
	printf("KTAP version 1\n1..6\n");
	printf("# %d online CPUs, %d possible\n", ncpus, npossible);
	if (ncpus < 1 || npossible < ncpus) {
		printf("# cannot read the CPU lists from sysfs\n");
		return 1;
	}
	test_smp_processor_id();
	test_inc("global_array_by_cpu", BPF_MAP_TYPE_ARRAY, 1);
	test_inc("percpu_array_slot", BPF_MAP_TYPE_PERCPU_ARRAY, 0);
	test_inc("percpu_hash_slot", BPF_MAP_TYPE_PERCPU_HASH, 0);
	test_percpu_array_oob();
	test_internal_mov_rejected();
	return failures ? 1 : 0;
}
