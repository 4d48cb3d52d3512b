// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_percpu_bench.c - per-CPU BPF access benchmark, run in the guest by
 * scripts/bench-percpu.sh.
 *
 * Four tc programs (BPF_PROG_TYPE_SCHED_CLS), three of them incrementing one 64-bit slot per
 * run, timed in the kernel by BPF_PROG_TEST_RUN with a repeat count (the kernel reports the mean
 * nanoseconds per run):
 *
 *   glob-arr-inc   array[bpf_get_smp_processor_id()] += 1 on a plain array
 *   arr-inc        per-CPU array[0] += 1
 *   hash-inc       per-CPU hash[0] += 1
 *   cpu-id         bpf_get_smp_processor_id() alone (the helper's share of glob-arr-inc)
 *
 * and the size of the JIT-ed program "call bpf_get_smp_processor_id; exit" next to
 * "call bpf_ktime_get_ns; exit" (the same shape with a helper no JIT inlines).
 *
 * Output: KTAP, with one machine-readable line per measurement (a timed program's line is
 * printed before its slots are checked; the case fails if they are wrong):
 *   # bench: NAME mops=M.MMM ns=N.NN trials=T repeat=R
 *   # bench: jited NAME bytes=B
 * The case fails only if a program cannot be loaded or run, or its slot does not hold the
 * number of runs afterwards; the numbers themselves are never judged here.
 *
 * Static, raw bpf(2) syscalls: no libbpf, so it builds for every arch the harness boots.
 */
#define _GNU_SOURCE
#include "../bpf_raw.h"

#define TRIALS	5
#define REPEAT	1000000

static char verifier_log[65536];
static int casenum, failures;

static int prog_load(const struct bpf_insn *insns, int n)
{
	int fd = prog_load_type(BPF_PROG_TYPE_SCHED_CLS, insns, n, verifier_log,
				sizeof(verifier_log));

	if (fd < 0)
		printf("# load failed: %s\n# %.400s\n", strerror(-fd), verifier_log);
	return fd;
}

/* Mean ns per run of @repeat runs, or a negative value on error. */
static double prog_time(int fd, unsigned int repeat)
{
	uint32_t ns = 0;
	int err = pkt_test_run(fd, repeat, NULL, &ns);

	if (err) {
		printf("# test run failed: %s\n", strerror(-err));
		return -1;
	}
	return ns;
}

static unsigned int jited_len(int fd)
{
	struct bpf_prog_info info;

	memset(&info, 0, sizeof(info));
	if (prog_info_by_fd(fd, &info))
		return 0;
	return info.jited_prog_len;
}

static void result(int ok, const char *name)
{
	printf("%s %d %s\n", ok ? "ok" : "not ok", ++casenum, name);
	if (!ok)
		failures++;
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Run @fd TRIALS times REPEAT times and print the median as a "# bench:" line (only when
 * every trial ran). Returns 1 if all trials ran, 0 otherwise.
 */
static int time_prog(int fd, const char *name)
{
	double ns[TRIALS];
	int t;

	for (t = 0; t < TRIALS; t++) {
		ns[t] = prog_time(fd, REPEAT);
		if (ns[t] <= 0)
			return 0;
	}
	qsort(ns, TRIALS, sizeof(ns[0]), cmp_double);
	printf("# bench: %s mops=%.3f ns=%.2f trials=%d repeat=%d\n", name,
	       1e3 / ns[TRIALS / 2], ns[TRIALS / 2], TRIALS, REPEAT);
	return 1;
}

/* cpu-id: "call bpf_get_smp_processor_id; r0 = 0; exit". */
static void bench_cpu_id(const char *name)
{
	const struct bpf_insn prog[] = {
		CALL(BPF_FUNC_get_smp_processor_id), MOV64_IMM(BPF_REG_0, 0), EXIT(),
	};
	int fd = prog_load(prog, 3), ok = fd >= 0 && time_prog(fd, name);

	if (fd >= 0)
		close(fd);
	result(ok, name);
}

/*
 * Program: key = by_cpu ? smp_processor_id() : 0; v = lookup(map, &key); if (v) *v += 1;
 * return 0.
 */
static void bench_inc(const char *name, enum bpf_map_type type, int by_cpu, int ncpus,
		      int npossible)
{
	int entries = by_cpu ? ncpus : 1, nslots = 1, map, fd, t, ok = 1;
	struct bpf_insn prog[] = {
		CALL(BPF_FUNC_get_smp_processor_id),
		STX_W(BPF_REG_10, BPF_REG_0, -4),
		LD_MAP_FD(BPF_REG_1, 0),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 3),
		LDX_DW(BPF_REG_1, BPF_REG_0, 0),
		ADD64_IMM(BPF_REG_1, 1),
		STX_DW(BPF_REG_0, BPF_REG_1, 0),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	uint64_t *val, sum = 0;
	int i;

	/* A per-CPU map's value reads as one slot per possible CPU. */
	if (type != BPF_MAP_TYPE_ARRAY)
		nslots = npossible;
	val = calloc(nslots, sizeof(*val));
	map = map_create(type, sizeof(uint64_t), entries);
	if (map < 0 || !val) {
		printf("# %s: map create failed: %s\n", name, strerror(errno));
		result(0, name);
		free(val);
		return;
	}
	if (type == BPF_MAP_TYPE_PERCPU_HASH && map_update(map, 0, val)) {
		printf("# %s: map update failed: %s\n", name, strerror(errno));
		ok = 0;
	}
	prog[2].imm = map;
	if (!by_cpu) {
		prog[0] = MOV64_IMM(BPF_REG_0, 0);
		prog[1] = ST_W(BPF_REG_10, -4, 0);
	}
	fd = ok ? prog_load(prog, sizeof(prog) / sizeof(prog[0])) : -1;
	if (fd < 0 || !time_prog(fd, name))
		ok = 0;
	/* The slots must hold every run: TRIALS * REPEAT increments in all. */
	if (ok) {
		for (i = 0; i < entries; i++) {
			if (map_lookup(map, i, val)) {
				ok = 0;
				break;
			}
			for (t = 0; t < nslots; t++)
				sum += val[t];
		}
		if (sum != (uint64_t)TRIALS * REPEAT) {
			printf("# %s: slots hold %llu increments, want %llu\n", name,
			       (unsigned long long)sum, (unsigned long long)TRIALS * REPEAT);
			ok = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	close(map);
	free(val);
	result(ok, name);
}

static void jited_call(const char *name, int helper)
{
	const struct bpf_insn prog[] = { CALL(helper), EXIT() };
	int fd = prog_load(prog, 2);
	unsigned int len = fd >= 0 ? jited_len(fd) : 0;

	if (len)
		printf("# bench: jited %s bytes=%u\n", name, len);
	if (fd >= 0)
		close(fd);
	result(len > 0, name);
}

int main(void)
{
	int ncpus = count_cpus("/sys/devices/system/cpu/online");
	int npossible = count_cpus("/sys/devices/system/cpu/possible");

	if (ncpus < 1)
		ncpus = 1;
	if (npossible < ncpus)
		npossible = ncpus;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..6\n# %d online CPUs, %d possible\n", ncpus, npossible);
	bench_inc("glob-arr-inc", BPF_MAP_TYPE_ARRAY, 1, ncpus, npossible);
	bench_inc("arr-inc", BPF_MAP_TYPE_PERCPU_ARRAY, 0, ncpus, npossible);
	bench_inc("hash-inc", BPF_MAP_TYPE_PERCPU_HASH, 0, ncpus, npossible);
	bench_cpu_id("cpu-id");
	jited_call("smp_processor_id", BPF_FUNC_get_smp_processor_id);
	jited_call("ktime_get_ns", BPF_FUNC_ktime_get_ns);
	return failures ? 1 : 0;
}
