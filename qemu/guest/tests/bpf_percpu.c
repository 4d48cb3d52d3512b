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
 *   percpu_array_inner_map  a per-CPU array reached through an array of maps, larger
 *                           than the inner-map template: keys past the template's
 *                           max_entries still work (no bound inlined from the template)
 *   smp_processor_id_inlined
 *                           the helper call is inlined: gone from the xlated program
 *                           (x86-64: the verifier's per-CPU load), or kept in xlated but
 *                           the jited program is shorter than one calling an argument-less
 *                           helper of the same shape (arm64, riscv64: the JIT's inline);
 *                           on a uniprocessor kernel (no "SMP" in uname's version) the
 *                           xlated program is "w0 = 0; exit" (with a zext between where the
 *                           JIT wants explicit zero extension)
 *   percpu_lookup_inlined   per-CPU array and hash lookups use the per-CPU MOV in xlated
 *   socket_filter_cpu       an eBPF socket filter on a UDP socket (its helper is
 *                           bpf_get_raw_cpu_id(), not the tracing one) that passes only
 *                           datagrams filtered on CPU c: a datagram sent over loopback by a
 *                           sender pinned to c passes, one sent from another CPU is dropped
 *   classic_filter_cpu      the same with a classic filter reading SKF_AD_CPU, which the
 *                           kernel converts to a call of bpf_get_raw_cpu_id() (inlined by the
 *                           arm64 and riscv64 JITs, which match the helper's address)
 *   over_jit_limit          a socket filter with an inlinable per-CPU array lookup, loaded
 *                           without privileges while net.core.bpf_jit_limit is exceeded: the
 *                           verifier inlines it (the JIT was requested), the JIT refuses it.
 *                           6.1.y's bpf_prog_select_runtime() then refuses the program
 *                           (ENOTSUPP: no interpreter fallback for a program whose JIT was
 *                           requested), so inlined code never reaches the interpreter; a
 *                           kernel that falls back must interpret it correctly: not JIT-ed,
 *                           one per-CPU MOV, and increments from a datagram sent on each CPU
 *                           landing in that CPU's slot
 *
 * With net.core.bpf_jit_enable=0 (the -interp variants of qemu/arch/) every program is
 * interpreted and nothing is inlined: the cases above check the interpreter's results,
 * smp_processor_id_inlined and percpu_lookup_inlined check that the verifier left the calls
 * (and nothing was JIT-ed), and over_jit_limit, with no JIT to exceed, is skipped. The
 * interpreter's per-CPU MOV itself is run by test_bpf, which loads its programs directly.
 *
 * Loopback delivery runs the receiving socket's filter on the sending CPU (the datagram
 * goes through that CPU's backlog, in softirq context, before sendto() returns): no RPS.
 *
 * The first seven and the socket filters hold on the base and must keep holding with the
 * series. smp_processor_id_inlined and percpu_lookup_inlined
 * test the series' feature and are skipped, with the reason, when the running kernel does
 * not have it: the guest reads /proc/kallsyms, where the architecture's own definitions of
 * bpf_jit_supports_percpu_insn and bpf_jit_inlines_helper_call show as text symbols
 * (T/t) and the generic fallbacks as weak ones (W), or are absent before the series.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "../bpf_raw.h"
#include "../ktap.h"

#define JIT_ENABLE	"/proc/sys/net/core/bpf_jit_enable"
#define JIT_LIMIT	"/proc/sys/net/core/bpf_jit_limit"
#define UNPRIV_BPF	"/proc/sys/kernel/unprivileged_bpf_disabled"

/* The kernel-internal per-CPU MOV, as the kernel's xlated dump shows it */
#define IS_PERCPU_MOV(i)	((i).code == (BPF_ALU64 | BPF_MOV | BPF_X) && (i).off == -1)

static int ncpus;	/* online CPUs, assumed to be 0..ncpus-1 */
static int npossible;	/* possible CPUs: per-CPU map values come in this many slots */
static int jit_enabled;	/* net.core.bpf_jit_enable > 0: programs are JIT-ed (and inlined) */
static char verifier_log[65536];

static int map_create_attr(union bpf_attr *a)
{
	return sys_bpf(BPF_MAP_CREATE, a);
}

/* Load a raw tracepoint program; returns the fd or -errno, verifier log kept on error. */
static int prog_load(const struct bpf_insn *insns, int n)
{
	return prog_load_type(BPF_PROG_TYPE_RAW_TRACEPOINT, insns, n, verifier_log,
			      sizeof(verifier_log));
}

/* Run @fd once on @cpu; returns 0 and the program's return value in *@ret, or -errno. */
static int prog_run_on(int fd, int cpu, uint32_t *ret)
{
	uint64_t ctx[1] = { 0 };

	return ctx_test_run(fd, ctx, sizeof(ctx), cpu, ret);
}

/*
 * Run @fd cpu + 1 times on every online CPU, so that CPU c's slot ends at c + 1. Returns
 * the number of runs that failed or did not return 0.
 */
static int run_on_each_cpu(int fd)
{
	int cpu, i, bad = 0;
	uint32_t ret;

	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i <= cpu; i++)
			if (prog_run_on(fd, cpu, &ret) || ret != 0)
				bad++;
	return bad;
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
	int map, fd, cpu, bad = 0;

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
	bad = run_on_each_cpu(fd);
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

/* 1 if /proc/kallsyms has @name as a text symbol (T/t), 0 if weak, absent or unreadable. */
static int kallsyms_strong(const char *name)
{
	char type = kallsyms_type(name);

	return type == 'T' || type == 't';
}

struct prog_dump {
	struct bpf_insn xlated[256];
	unsigned int n_xlated;		/* instructions in xlated[] */
	unsigned int jited_len;		/* bytes of JIT-ed code */
};

/* Fetch the xlated instructions and the jited length of @fd; 0 or -errno. */
static int prog_dump(int fd, struct prog_dump *d)
{
	struct bpf_prog_info info;
	int err;

	memset(&info, 0, sizeof(info));
	memset(d, 0, sizeof(*d));
	info.xlated_prog_len = sizeof(d->xlated);
	info.xlated_prog_insns = (uintptr_t)d->xlated;
	err = prog_info_by_fd(fd, &info);
	if (err)
		return err;
	if (info.xlated_prog_len > sizeof(d->xlated))
		return -E2BIG;
	d->n_xlated = info.xlated_prog_len / sizeof(struct bpf_insn);
	d->jited_len = info.jited_prog_len;
	return 0;
}

/* Count the helper calls and per-CPU MOVs of an xlated dump. */
static void count_insns(const struct prog_dump *d, int *calls, int *percpu_movs)
{
	unsigned int i;

	*calls = 0;
	*percpu_movs = 0;
	for (i = 0; i < d->n_xlated; i++) {
		if (d->xlated[i].code == (BPF_JMP | BPF_CALL) && d->xlated[i].src_reg == 0)
			(*calls)++;
		if (IS_PERCPU_MOV(d->xlated[i]))
			(*percpu_movs)++;
	}
}

/* Load "call @helper; exit" and dump it; 0 or -errno. */
static int load_and_dump_call(int helper, struct prog_dump *d)
{
	const struct bpf_insn prog[] = { CALL(helper), EXIT() };
	int fd = prog_load(prog, 2), err;

	if (fd < 0)
		return fd;
	err = prog_dump(fd, d);
	close(fd);
	return err;
}

static void test_smp_processor_id_inlined(int jit_percpu, int jit_inlines, int up)
{
	const char *name = "smp_processor_id_inlined";
	static struct prog_dump id, other;
	int calls, movs, err;

	if (!jit_percpu && !jit_inlines) {
		printf("ok %d %s # SKIP the JIT has no per-CPU MOV and inlines no helper "
		       "(kallsyms: no text symbol bpf_jit_supports_percpu_insn or "
		       "bpf_jit_inlines_helper_call)\n", ++casenum, name);
		return;
	}
	err = load_and_dump_call(BPF_FUNC_get_smp_processor_id, &id);
	if (!err)
		err = load_and_dump_call(BPF_FUNC_ktime_get_ns, &other);
	if (err) {
		result(0, name, "load or dump failed: %s", strerror(-err));
		return;
	}
	count_insns(&id, &calls, &movs);
	if (up) {
		/*
		 * CONFIG_SMP=n: the verifier makes the call the constant 0, followed by
		 * exit; JITs that want explicit zero extension (riscv64) get the
		 * verifier's zext (w0 = w0, imm 1) in between.
		 */
		const struct bpf_insn *x = id.xlated;
		unsigned int n = id.n_xlated;
		int zext_ok = n == 2 || (n == 3 && x[1].code == (BPF_ALU | BPF_MOV | BPF_X) &&
					 x[1].dst_reg == BPF_REG_0 && x[1].src_reg == BPF_REG_0 &&
					 x[1].imm == 1);

		result(n >= 2 && n <= 3 && zext_ok &&
		       x[0].code == (BPF_ALU | BPF_MOV | BPF_K) && x[0].dst_reg == BPF_REG_0 &&
		       x[0].imm == 0 && x[n - 1].code == (BPF_JMP | BPF_EXIT), name,
		       "uniprocessor: xlated has %u insns, first code %#x imm %d (want w0 = 0, "
		       "[zext,] exit)", n, x[0].code, x[0].imm);
	} else if (!jit_enabled) {
		/* The verifier inlines only for the JIT: the interpreter calls the helper. */
		result(calls == 1 && movs == 0 && id.jited_len == 0, name,
		       "bpf_jit_enable=0: xlated calls %d (want 1), %d per-CPU MOVs (want 0), "
		       "jited %u bytes (want 0)", calls, movs, id.jited_len);
	} else if (jit_inlines) {
		/* arm64, riscv64: the call stays in xlated and the JIT replaces it */
		result(calls == 1 && id.jited_len < other.jited_len, name,
		       "JIT inlines: xlated calls %d (want 1), jited %u bytes vs %u for "
		       "a ktime_get_ns call (want fewer)", calls, id.jited_len, other.jited_len);
	} else {
		/* x86-64: the verifier loads cpu_number through the per-CPU MOV */
		result(calls == 0 && movs == 1, name,
		       "verifier inlines: xlated has %d calls (want 0), %d per-CPU MOVs "
		       "(want 1)", calls, movs);
	}
}

static void test_percpu_lookup_inlined(int jit_percpu)
{
	const char *name = "percpu_lookup_inlined";
	static struct prog_dump d;
	static const enum bpf_map_type types[] = {
		BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_PERCPU_HASH,
	};
	int t, bad = 0;

	if (!jit_percpu) {
		printf("ok %d %s # SKIP the JIT has no per-CPU MOV (kallsyms: no text "
		       "symbol bpf_jit_supports_percpu_insn)\n", ++casenum, name);
		return;
	}
	for (t = 0; t < 2; t++) {
		int map = map_create(types[t], sizeof(uint64_t), 4), fd, calls, movs, err;

		if (map < 0) {
			printf("# map type %d: create failed: %s\n", types[t], strerror(errno));
			bad++;
			continue;
		}
		fd = load_inc_prog(map, 0, 1);
		err = fd < 0 ? fd : prog_dump(fd, &d);
		if (fd >= 0)
			close(fd);
		close(map);
		if (err) {
			printf("# map type %d: load or dump failed: %s\n", types[t],
			       strerror(-err));
			bad++;
			continue;
		}
		count_insns(&d, &calls, &movs);
		printf("# map type %d: xlated %u insns, %d helper calls, %d per-CPU MOVs, jited %u "
		       "bytes\n", types[t], d.n_xlated, calls, movs, d.jited_len);
		/* With bpf_jit_enable=0 nothing is inlined or JIT-ed. */
		if (jit_enabled ? movs != 1 : movs != 0 || d.jited_len)
			bad++;
	}
	result(!bad, name, jit_enabled ? "%d of 2 lookups without exactly one per-CPU MOV" :
	       "bpf_jit_enable=0: %d of 2 lookups inlined or JIT-ed", bad);
}

/*
 * An array of maps whose template is a 4-entry per-CPU array, holding an 8-entry one.
 * The program increments inner[6]: the bound must come from the inner map at run time.
 */
static void test_percpu_array_inner_map(void)
{
	const char *name = "percpu_array_inner_map";
	uint64_t *val = calloc(npossible, sizeof(*val));
	int tmpl, inner, outer = -1, fd = -1, cpu, bad = 0;
	union bpf_attr a;
	uint32_t inner_fd;

	tmpl = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(uint64_t), 4);
	inner = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(uint64_t), 8);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	a.inner_map_fd = tmpl;
	if (tmpl >= 0 && inner >= 0)
		outer = map_create_attr(&a);
	inner_fd = inner;
	if (outer < 0 || map_update(outer, 0, &inner_fd)) {
		result(0, name, "map setup failed: %s", strerror(errno));
		goto out;
	}
	{
		struct bpf_insn prog[] = {
			ST_W(BPF_REG_10, -4, 0),
			LD_MAP_FD(BPF_REG_1, outer),
			MOV64_REG(BPF_REG_2, BPF_REG_10),
			ADD64_IMM(BPF_REG_2, -4),
			CALL(BPF_FUNC_map_lookup_elem),
			JEQ_IMM(BPF_REG_0, 0, 11),
			ST_W(BPF_REG_10, -8, 6),
			MOV64_REG(BPF_REG_1, BPF_REG_0),
			MOV64_REG(BPF_REG_2, BPF_REG_10),
			ADD64_IMM(BPF_REG_2, -8),
			CALL(BPF_FUNC_map_lookup_elem),
			JEQ_IMM(BPF_REG_0, 0, 5),
			LDX_DW(BPF_REG_1, BPF_REG_0, 0),
			ADD64_IMM(BPF_REG_1, 1),
			STX_DW(BPF_REG_0, BPF_REG_1, 0),
			MOV64_IMM(BPF_REG_0, 0),
			EXIT(),
			MOV64_IMM(BPF_REG_0, 1),	/* no element */
			EXIT(),
		};

		fd = prog_load(prog, sizeof(prog) / sizeof(prog[0]));
	}
	if (fd < 0) {
		print_log();
		result(0, name, "load failed: %s", strerror(-fd));
		goto out;
	}
	bad = run_on_each_cpu(fd);
	if (bad)
		printf("# %d runs failed or found no element 6\n", bad);
	if (map_lookup(inner, 6, val))
		bad++;
	else
		for (cpu = 0; cpu < ncpus; cpu++)
			if (val[cpu] != (uint64_t)cpu + 1) {
				printf("# cpu %d: inner[6] holds %llu, want %d\n", cpu,
				       (unsigned long long)val[cpu], cpu + 1);
				bad++;
			}
	result(!bad, name, "inner map of 8 entries behind a 4-entry template: %d errors", bad);
out:
	if (fd >= 0)
		close(fd);
	if (outer >= 0)
		close(outer);
	if (inner >= 0)
		close(inner);
	if (tmpl >= 0)
		close(tmpl);
	free(val);
}

/* Pin the calling thread to @cpu; 0 or -errno. */
static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * Send one datagram whose first byte is @tag from @cpu to the socket @fd itself (bound to
 * @addr). Returns 0 or -errno.
 */
static int send_from(int fd, const struct sockaddr_in *addr, int cpu, char tag)
{
	char buf[16] = { tag };
	int err = pin_to(cpu);

	if (err)
		return err;
	if (sendto(fd, buf, sizeof(buf), 0, (const struct sockaddr *)addr, sizeof(*addr)) < 0)
		return -errno;
	return 0;
}

/*
 * The tag of the next datagram queued on @fd, waiting up to @wait_ms; -EAGAIN if none
 * came, or -errno.
 */
static int recv_tag(int fd, int wait_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[16];
	int n = poll(&p, 1, wait_ms);

	if (n < 0)
		return -errno;
	if (n == 0)
		return -EAGAIN;
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return n > 0 ? (unsigned char)buf[0] : -EBADMSG;
}

/*
 * A UDP socket bound to a free port of 127.0.0.1, with loopback brought up; its address in
 * *@addr. Returns the fd or -errno.
 */
static int udp_loopback(struct sockaddr_in *addr)
{
	socklen_t alen = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	if (fd < 0)
		return -errno;
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	err = lo_up(fd);
	if (!err && (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) ||
		     getsockname(fd, (struct sockaddr *)addr, &alen)))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Attach, with @attach (SO_ATTACH_BPF or SO_ATTACH_FILTER), the filter that
 * @make_filter(cpu, &val, &len) returns for each online CPU c in turn to one loopback UDP
 * socket: a datagram sent from c must arrive, one sent before it from another CPU (c + 1)
 * must not. @val points to an int (program fd) or a struct sock_fprog. Returns the number
 * of CPUs on which the filter decided wrongly; prints each.
 */
static int check_filter_cpus(const char *name, int attach,
			     int (*make_filter)(int cpu, void *val, socklen_t *len))
{
	struct sockaddr_in addr;
	int fd = udp_loopback(&addr), cpu, bad = 0;
	cpu_set_t saved;

	if (fd < 0) {
		printf("# %s: UDP socket setup failed: %s\n", name, strerror(-fd));
		return ncpus;
	}
	sched_getaffinity(0, sizeof(saved), &saved);
	for (cpu = 0; cpu < ncpus; cpu++) {
		union {
			int prog_fd;
			struct sock_fprog fprog;
		} val;
		socklen_t len;
		int other = (cpu + 1) % ncpus, err, tag;

		err = make_filter(cpu, &val, &len);
		if (!err && setsockopt(fd, SOL_SOCKET, attach, &val, len))
			err = -errno;
		if (attach == SO_ATTACH_BPF && val.prog_fd >= 0)
			close(val.prog_fd);	/* the socket holds the program */
		if (err) {
			printf("# %s: cpu %d: filter not attached: %s\n", name, cpu,
			       strerror(-err));
			bad++;
			continue;
		}
		/* Datagram 'x' from another CPU must be dropped, 'c' from cpu must pass. */
		err = ncpus > 1 ? send_from(fd, &addr, other, 'x') : 0;
		if (!err)
			err = send_from(fd, &addr, cpu, 'c');
		tag = err ? err : recv_tag(fd, 1000);
		if (tag == 'c')
			tag = recv_tag(fd, 0);	/* nothing after it either */
		else
			tag = tag < 0 ? tag : -EPROTO;
		if (tag != -EAGAIN) {
			printf("# %s: cpu %d: %s\n", name, cpu,
			       tag == 'x' ? "passed a datagram sent from another CPU" :
			       tag >= 0 ? "unexpected datagram" :
			       tag == -EPROTO ? "the other CPU's datagram came first" :
			       tag == -EAGAIN ? "dropped the datagram sent from this CPU" :
			       strerror(-tag));
			bad++;
		}
		while (recv_tag(fd, 0) >= 0)
			;
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	close(fd);
	return bad;
}

/* eBPF socket filter: keep the whole datagram (0xffff bytes) if it runs on @cpu, else 0. */
static int make_socket_filter(int cpu, void *val, socklen_t *len)
{
	const struct bpf_insn prog[] = {
		CALL(BPF_FUNC_get_smp_processor_id),
		JEQ_IMM(BPF_REG_0, cpu, 2),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
		MOV64_IMM(BPF_REG_0, 0xffff),
		EXIT(),
	};
	int fd = prog_load_type(BPF_PROG_TYPE_SOCKET_FILTER, prog, 6, verifier_log,
				sizeof(verifier_log));

	*(int *)val = fd;
	*len = sizeof(int);
	if (fd < 0)
		print_log();
	return fd < 0 ? fd : 0;
}

/* Classic filter: A = SKF_AD_CPU; keep the datagram if A == @cpu, else drop it. */
static int make_classic_filter(int cpu, void *val, socklen_t *len)
{
	static struct sock_filter insns[4];
	struct sock_fprog *fprog = val;

	insns[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_CPU);
	insns[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, cpu, 0, 1);
	insns[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffff);
	insns[3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	fprog->len = 4;
	fprog->filter = insns;
	*len = sizeof(*fprog);
	return 0;
}

static void test_socket_filters(void)
{
	int bad = check_filter_cpus("socket_filter_cpu", SO_ATTACH_BPF, make_socket_filter);

	result(!bad, "socket_filter_cpu", "eBPF socket filter on %d CPUs: %d wrong", ncpus, bad);
	bad = check_filter_cpus("classic_filter_cpu", SO_ATTACH_FILTER, make_classic_filter);
	result(!bad, "classic_filter_cpu", "classic SKF_AD_CPU filter on %d CPUs: %d wrong",
	       ncpus, bad);
}

/* The effective capabilities that make bpf(2) privileged, and exempt from bpf_jit_limit. */
static const int bpf_caps[] = { CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN };

/* Drop (@on 0) or raise again (@on 1) bpf_caps[] in the effective set; 0 or -errno. */
static int set_bpf_caps(int on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	size_t i;

	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (i = 0; i < sizeof(bpf_caps) / sizeof(bpf_caps[0]); i++) {
		uint32_t bit = 1u << (bpf_caps[i] % 32);

		if (on)
			d[bpf_caps[i] / 32].effective |= bit;
		else
			d[bpf_caps[i] / 32].effective &= ~bit;
	}
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * Load, without privileges and over bpf_jit_limit, a socket filter that increments key 0
 * of the per-CPU array @map and keeps the datagram. Returns the program fd or -errno;
 * kernel.unprivileged_bpf_disabled, bpf_jit_limit and the capabilities are as before.
 */
static int load_unpriv_over_jit_limit(int map)
{
	const struct bpf_insn prog[] = {
		ST_W(BPF_REG_10, -4, 0),
		LD_MAP_FD(BPF_REG_1, map),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 3),
		LDX_DW(BPF_REG_1, BPF_REG_0, 0),
		ADD64_IMM(BPF_REG_1, 1),
		STX_DW(BPF_REG_0, BPF_REG_1, 0),
		MOV64_IMM(BPF_REG_0, 0xffff),
		EXIT(),
	};
	long limit = file_long(JIT_LIMIT), unpriv = file_long(UNPRIV_BPF);
	char was[32];
	int fd, err;

	if (limit < 1 || unpriv < 0)
		return -ENOENT;
	/* 2 (CONFIG_BPF_UNPRIV_DEFAULT_OFF) may be lowered by root; 1 may not. */
	if (unpriv == 2 && write_text(UNPRIV_BPF, "0"))
		return -EPERM;
	err = write_text(JIT_LIMIT, "1");
	if (!err)
		err = set_bpf_caps(0);
	fd = err ? err : prog_load_type(BPF_PROG_TYPE_SOCKET_FILTER, prog,
					sizeof(prog) / sizeof(prog[0]), verifier_log,
					sizeof(verifier_log));
	if (set_bpf_caps(1))
		printf("# cannot raise the capabilities again: %s\n", strerror(errno));
	snprintf(was, sizeof(was), "%ld", limit);
	if (write_text(JIT_LIMIT, was))
		printf("# cannot put bpf_jit_limit back to %ld\n", limit);
	if (unpriv == 2 && write_text(UNPRIV_BPF, "2"))
		printf("# cannot put %s back to 2\n", UNPRIV_BPF);
	return fd;
}

static void test_over_jit_limit(void)
{
	const char *name = "over_jit_limit";
	uint64_t *val = calloc(npossible, sizeof(*val));
	static struct prog_dump d;
	struct sockaddr_in addr;
	int map = -1, fd = -1, sock = -1, cpu, i, bad = 0, calls, movs;
	cpu_set_t saved;

	if (!jit_enabled) {
		printf("ok %d %s # SKIP bpf_jit_enable=0: no JIT to exceed bpf_jit_limit\n",
		       ++casenum, name);
		free(val);
		return;
	}
	map = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(uint64_t), 4);
	fd = map < 0 ? -errno : load_unpriv_over_jit_limit(map);
	if (fd == -524) {	/* ENOTSUPP, kernel-internal: no libc name */
		result(1, name, "refused with ENOTSUPP: no interpreter fallback once the JIT "
		       "was requested");
		goto out;
	}
	if (fd < 0 || prog_dump(fd, &d)) {
		print_log();
		result(0, name, "unprivileged load over bpf_jit_limit or its dump failed: %s",
		       strerror(fd < 0 ? -fd : errno));
		goto out;
	}
	count_insns(&d, &calls, &movs);
	printf("# xlated %u insns, %d per-CPU MOVs, jited %u bytes\n", d.n_xlated, movs,
	       d.jited_len);
	if (movs != 1 || d.jited_len) {
		result(0, name, "want the lookup inlined (1 per-CPU MOV, got %d) and nothing "
		       "JIT-ed (got %u bytes): the interpreter is not what runs it", movs,
		       d.jited_len);
		goto out;
	}
	sock = udp_loopback(&addr);
	if (sock < 0 || setsockopt(sock, SOL_SOCKET, SO_ATTACH_BPF, &fd, sizeof(fd))) {
		result(0, name, "UDP socket setup failed: %s", strerror(sock < 0 ? -sock : errno));
		goto out;
	}
	sched_getaffinity(0, sizeof(saved), &saved);
	/* cpu + 1 datagrams from each CPU: the filter runs there, interpreted. */
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i <= cpu; i++)
			if (send_from(sock, &addr, cpu, 'c') || recv_tag(sock, 1000) != 'c')
				bad++;
	sched_setaffinity(0, sizeof(saved), &saved);
	if (bad)
		printf("# %d datagrams not sent or not received\n", bad);
	if (map_lookup(map, 0, val))
		bad++;
	else
		for (cpu = 0; cpu < ncpus; cpu++)
			if (val[cpu] != (uint64_t)cpu + 1) {
				printf("# cpu %d: slot holds %llu, want %d\n", cpu,
				       (unsigned long long)val[cpu], cpu + 1);
				bad++;
			}
	result(!bad, name, "interpreted per-CPU MOV on %d CPUs: %d errors", ncpus, bad);
out:
	if (sock >= 0)
		close(sock);
	if (fd >= 0)
		close(fd);
	if (map >= 0)
		close(map);
	free(val);
}

/*
 * Whether the kernel is built without CONFIG_SMP: only an SMP kernel says "SMP" in its
 * version string (scripts/mkcompile_h). kallsyms cannot tell: the per-CPU offset table is
 * data, which it lists only with KALLSYMS_ALL (Debian's arm64 kernels have none).
 */
static int uniprocessor(void)
{
	struct utsname u;

	return !uname(&u) && !strstr(u.version, " SMP");
}

int main(void)
{
	int jit_percpu = kallsyms_strong("bpf_jit_supports_percpu_insn");
	int jit_inlines = kallsyms_strong("bpf_jit_inlines_helper_call");
	int up = uniprocessor();

	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpus = count_cpus("/sys/devices/system/cpu/online");
	npossible = count_cpus("/sys/devices/system/cpu/possible");
	jit_enabled = file_long(JIT_ENABLE) > 0;
	printf("KTAP version 1\n1..12\n");
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
	test_percpu_array_inner_map();
	test_smp_processor_id_inlined(jit_percpu, jit_inlines, up);
	test_percpu_lookup_inlined(jit_percpu);
	test_socket_filters();
	test_over_jit_limit();
	return failures ? 1 : 0;
}
