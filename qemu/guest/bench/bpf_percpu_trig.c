// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_percpu_trig.c - per-CPU BPF access in the shape of the trigger benchmark the per-CPU
 * work upstream was measured with, run in the guest by scripts/bench-percpu.sh.
 *
 * Raw tracepoint programs whose body runs BATCH (100) times per invocation in a bounded
 * loop, so that the cost of an invocation is spread over 100 operations, invoked by
 * BPF_PROG_TEST_RUN (one invocation per call: a raw_tp test run takes no repeat count) and
 * timed from user space, WARMUP_MS of calls and then MEASURE_MS of them counted:
 * M ops/s = loop iterations per second. Per iteration:
 *
 *   glob-arr-inc  array[cpu] += 1 in a plain array of a slot per CPU, the CPU id fetched
 *                 once per invocation with bpf_get_smp_processor_id()
 *   arr-inc       per-CPU array[0] += 1
 *   hash-inc      per-CPU hash: look up key 0, insert it (value 1) if it is missing, else
 *                 increment it
 *   cpu-id        bpf_get_smp_processor_id(), summed in a register
 *
 * RUNS runs of each, each printed as a machine-readable line:
 *
 *   # bench: trig NAME run=R mops=M calls=C ms=T
 *
 * A case fails only if a program cannot be loaded or run, or if the slots of an -inc
 * program do not hold one increment per iteration of every call (warm-up included)
 * afterwards; the numbers themselves are never judged here.
 *
 * Static, raw bpf(2) syscalls: no libbpf, so it builds for every arch the harness boots.
 */
#define _GNU_SOURCE
#include <time.h>
#include "../bpf_raw.h"
#include "../ktap.h"

#define BATCH		100
#define RUNS		5
#define WARMUP_MS	200.0
#define MEASURE_MS	1000.0

#define ADD64_REG(d, s)		INSN(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define JLT_IMM(d, i, o)	INSN(BPF_JMP | BPF_JLT | BPF_K, d, 0, o, i)
#define JA(o)			INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)

static char verifier_log[1 << 20];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int prog_load(const struct bpf_insn *insns, int n, const char *name)
{
	int fd = prog_load_type(BPF_PROG_TYPE_RAW_TRACEPOINT, insns, n, verifier_log,
				sizeof(verifier_log));

	if (fd < 0)
		printf("# %s: load failed: %s\n# %.400s\n", name, strerror(-fd), verifier_log);
	return fd;
}

/*
 * Invoke @fd by test runs for at least @ms milliseconds: the milliseconds it took, with the
 * number of calls in *@calls, or -1 if a run fails.
 */
static double run_for(int fd, double ms, long long *calls)
{
	double t0 = now_ms(), t;
	uint32_t ret;
	long long n = 0;

	do {
		if (ctx_test_run(fd, NULL, 0, -1, &ret)) {
			printf("# test run failed: %s\n", strerror(errno));
			return -1;
		}
		n++;
	} while ((t = now_ms()) - t0 < ms);
	*calls = n;
	return t - t0;
}

/*
 * RUNS runs of @fd (warm-up, then the measured interval), each printed; the calls of all
 * runs, warm-up included, in *@total. Returns 1 if every run ran.
 */
static int time_prog(int fd, const char *name, long long *total)
{
	long long warm, calls;
	double ms;
	int r;

	*total = 0;
	for (r = 1; r <= RUNS; r++) {
		if (run_for(fd, WARMUP_MS, &warm) < 0)
			return 0;
		ms = run_for(fd, MEASURE_MS, &calls);
		if (ms < 0)
			return 0;
		*total += warm + calls;
		printf("# bench: trig %s run=%d mops=%.3f calls=%lld ms=%.1f\n", name, r,
		       calls * BATCH / ms / 1e3, calls, ms);
	}
	return 1;
}

/*
 * The -inc programs: r7 = key (the CPU id for glob-arr-inc, else 0); BATCH times: v =
 * lookup(map, &key); if (v) *v += 1; else update(map, &key, &one, BPF_NOEXIST).
 */
static void bench_inc(const char *name, enum bpf_map_type type, int npossible)
{
	int by_cpu = type == BPF_MAP_TYPE_ARRAY;
	int entries = by_cpu ? npossible : 1;
	int nslots = type == BPF_MAP_TYPE_ARRAY ? 1 : npossible;
	struct bpf_insn prog[] = {
		MOV64_IMM(BPF_REG_6, 0),
		MOV64_IMM(BPF_REG_7, 0),		/* glob-arr-inc: call cpu id */
		MOV64_IMM(BPF_REG_0, 0),		/* glob-arr-inc: r7 = r0 */
		MOV64_IMM(BPF_REG_1, 1),
		STX_DW(BPF_REG_10, BPF_REG_1, -16),	/* one, the value inserted */
		/* 5: loop */
		STX_W(BPF_REG_10, BPF_REG_7, -4),
		LD_MAP_FD(BPF_REG_1, 0),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 4),		/* missing: to 16 */
		LDX_DW(BPF_REG_1, BPF_REG_0, 0),
		ADD64_IMM(BPF_REG_1, 1),
		STX_DW(BPF_REG_0, BPF_REG_1, 0),
		JA(8),					/* to 24 */
		/* 16: insert */
		LD_MAP_FD(BPF_REG_1, 0),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -16),
		MOV64_IMM(BPF_REG_4, BPF_NOEXIST),
		CALL(BPF_FUNC_map_update_elem),
		/* 24: next */
		ADD64_IMM(BPF_REG_6, 1),
		JLT_IMM(BPF_REG_6, BATCH, -21),		/* to 5 */
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	uint64_t *val = calloc(nslots, sizeof(*val)), sum = 0;
	int map = map_create(type, sizeof(uint64_t), entries), fd = -1, ok = 0, i, s;
	long long calls = 0;

	if (map < 0 || !val) {
		result(0, name, "map create failed: %s", strerror(errno));
		goto out;
	}
	prog[6].imm = map;
	prog[16].imm = map;
	if (by_cpu) {
		prog[1] = CALL(BPF_FUNC_get_smp_processor_id);
		prog[2] = MOV64_REG(BPF_REG_7, BPF_REG_0);
	}
	fd = prog_load(prog, sizeof(prog) / sizeof(prog[0]), name);
	if (fd < 0 || !time_prog(fd, name, &calls)) {
		result(0, name, "not run");
		goto out;
	}
	/* Every iteration of every call incremented (or inserted) one slot. */
	for (i = 0; i < entries; i++) {
		if (map_lookup(map, i, val)) {
			if (errno == ENOENT)
				continue;
			result(0, name, "lookup of %d: %s", i, strerror(errno));
			goto out;
		}
		for (s = 0; s < nslots; s++)
			sum += val[s];
	}
	ok = sum == (uint64_t)calls * BATCH;
	result(ok, name, ok ? NULL : "slots hold %llu increments, want %llu",
	       (unsigned long long)sum, (unsigned long long)calls * BATCH);
out:
	if (fd >= 0)
		close(fd);
	if (map >= 0)
		close(map);
	free(val);
}

/* cpu-id: BATCH times r7 += bpf_get_smp_processor_id(). */
static void bench_cpu_id(const char *name)
{
	const struct bpf_insn prog[] = {
		MOV64_IMM(BPF_REG_6, 0),
		MOV64_IMM(BPF_REG_7, 0),
		/* 2: loop */
		CALL(BPF_FUNC_get_smp_processor_id),
		ADD64_REG(BPF_REG_7, BPF_REG_0),
		ADD64_IMM(BPF_REG_6, 1),
		JLT_IMM(BPF_REG_6, BATCH, -4),		/* to 2 */
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	int fd = prog_load(prog, sizeof(prog) / sizeof(prog[0]), name);
	long long calls;
	int ok = fd >= 0 && time_prog(fd, name, &calls);

	if (fd >= 0)
		close(fd);
	result(ok, name, ok ? NULL : "not run");
}

int main(void)
{
	int npossible = count_cpus("/sys/devices/system/cpu/possible");

	if (npossible < 1)
		npossible = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..4\n# %d possible CPUs; %d iterations per call, %d runs of %.0f ms after %.0f ms of warm-up\n",
	       npossible, BATCH, RUNS, MEASURE_MS, WARMUP_MS);
	bench_inc("glob-arr-inc", BPF_MAP_TYPE_ARRAY, npossible);
	bench_inc("arr-inc", BPF_MAP_TYPE_PERCPU_ARRAY, npossible);
	bench_inc("hash-inc", BPF_MAP_TYPE_PERCPU_HASH, npossible);
	bench_cpu_id("cpu-id");
	return failures ? 1 : 0;
}
