/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_raw.h - the raw bpf(2) pieces shared by the guest's test and benchmark programs (the
 * .c files of qemu/guest/tests and qemu/guest/bench): instruction macros, the syscall, map
 * and program helpers, and the CPU count from sysfs. Static C against the kernel uapi
 * headers only (no libbpf: Debian 12 has no riscv64 libraries), so it builds for every arch.
 */
#ifndef GUEST_BPF_RAW_H
#define GUEST_BPF_RAW_H

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i)		INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s)		INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, i)		INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
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

static inline long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Number of CPUs in a list like "0-3" or "0,2-3" from sysfs; 0 on error. */
static inline int count_cpus(const char *path)
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

/* A map with 4-byte keys; returns the fd, or -1 with errno set. */
static inline int map_create(enum bpf_map_type type, int value_size, int max_entries)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = max_entries;
	return sys_bpf(BPF_MAP_CREATE, &a);
}

/*
 * BPF_OBJ_GET_INFO_BY_FD of object @fd into the @len bytes at @info (struct bpf_prog_info,
 * bpf_link_info, ...), whose array pointers and sizes the caller has set (every other field
 * zero): 0, or -errno with errno kept.
 */
static inline int obj_info_by_fd(int fd, void *info, uint32_t len)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = len;
	a.info.info = (uintptr_t)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) ? -errno : 0;
}

/* obj_info_by_fd() of program @fd. */
static inline int prog_info_by_fd(int fd, struct bpf_prog_info *info)
{
	return obj_info_by_fd(fd, info, sizeof(*info));
}

static inline int map_lookup(int fd, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
}

static inline int map_update(int fd, uint32_t key, const void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/*
 * Load a GPL program of @type, expected to attach as @attach_type to the vmlinux BTF type
 * @btf_id (0, 0 for programs that do not need it), with the verifier log in @log; the fd,
 * or -errno.
 */
static inline int prog_load_attach(enum bpf_prog_type type, enum bpf_attach_type attach_type,
				   uint32_t btf_id, const struct bpf_insn *insns, int n,
				   char *log, unsigned int log_size)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = attach_type;
	a.attach_btf_id = btf_id;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = log_size;
	a.log_level = 1;
	log[0] = '\0';
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

/* Load a GPL program of @type (no attach target); see prog_load_attach(). */
static inline int prog_load_type(enum bpf_prog_type type, const struct bpf_insn *insns, int n,
				 char *log, unsigned int log_size)
{
	return prog_load_attach(type, 0, 0, insns, n, log, log_size);
}

/*
 * BPF_PROG_TEST_RUN of @fd, @repeat times, on a zeroed 64-byte packet. Returns 0 with the
 * last run's return value in *@retval and the kernel's mean nanoseconds per run in
 * *@duration (either may be NULL), or -errno.
 */
static inline int pkt_test_run(int fd, uint32_t repeat, uint32_t *retval, uint32_t *duration)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = fd;
	a.test.data_in = (uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = repeat;
	if (sys_bpf(BPF_PROG_TEST_RUN, &a))
		return -errno;
	if (retval)
		*retval = a.test.retval;
	if (duration)
		*duration = a.test.duration;
	return 0;
}

/* Run the socket filter @fd once on a 64-byte packet; its return value, or -1 on error. */
static inline long pkt_run_once(int fd)
{
	uint32_t ret = 0;

	return pkt_test_run(fd, 1, &ret, NULL) ? -1 : (long)ret;
}

/*
 * BPF_PROG_TEST_RUN of @fd once on the context @ctx of @size bytes (the arguments of a
 * raw_tp or struct_ops program), on CPU @cpu if it is not negative. Returns 0 with the
 * program's return value in *@retval, or -errno (*@retval then 0).
 */
static inline int ctx_test_run(int fd, const void *ctx, uint32_t size, int cpu,
			       uint32_t *retval)
{
	union bpf_attr a;

	*retval = 0;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = fd;
	a.test.ctx_in = (uintptr_t)ctx;
	a.test.ctx_size_in = size;
	if (cpu >= 0) {
		a.test.flags = BPF_F_TEST_RUN_ON_CPU;
		a.test.cpu = cpu;
	}
	if (sys_bpf(BPF_PROG_TEST_RUN, &a))
		return -errno;
	*retval = a.test.retval;
	return 0;
}

/*
 * Load a GPL socket filter of @adds + 2 instructions returning @id + @adds * @imm (r0 = @id,
 * then @adds times r0 += @imm), without a verifier log (a level-1 log of thousands of
 * instructions would not fit); the fd, or -errno.
 */
static inline int load_add_filter(int id, int adds, int32_t imm)
{
	struct bpf_insn *insns = malloc((adds + 2) * sizeof(*insns));
	union bpf_attr a;
	int i, fd;

	if (!insns)
		return -ENOMEM;
	insns[0] = MOV64_IMM(0, id);
	for (i = 1; i <= adds; i++)
		insns[i] = ADD64_IMM(0, imm);
	insns[adds + 1] = EXIT();
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = adds + 2;
	a.license = (uintptr_t)"GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		fd = -errno;
	free(insns);
	return fd;
}

/* load_add_filter() adding 1: about 4 bytes of JIT-ed code per instruction. */
static inline int load_sized_filter(int id, int adds)
{
	return load_add_filter(id, adds, 1);
}

/*
 * The @adds of load_sized_filter() for program @i of the fleet's size mix: half below 500
 * bytes of code, a quarter 500 B - 2 kB, a quarter from 2 kB up to @max_adds (> 500)
 * instructions.
 */
static inline int fleet_adds(int i, int max_adds)
{
	if (i % 4 < 2)
		return 20 + (i * 37) % 100;
	if (i % 4 == 2)
		return 130 + (i * 53) % 350;
	return 500 + (i * 977) % (max_adds - 500);
}

/*
 * Write @text to the file @path, opened with @flags (O_TRUNC to replace, O_APPEND to add a
 * line to a list such as kprobe_events); an empty @text writes a newline, which the debugfs
 * and tracefs files read as "clear". 0 or -errno.
 */
static inline int write_text_flags(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | flags), err = 0;
	ssize_t len;

	if (!*text)
		text = "\n";
	len = strlen(text);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != len)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/* Bring the loopback device up (the guest's init does not) through socket @sock: 0 or -errno. */
static inline int lo_up(int sock)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(sock, SIOCGIFFLAGS, &ifr))
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	return ioctl(sock, SIOCSIFFLAGS, &ifr) ? -errno : 0;
}

/* write_text_flags() replacing what @path holds. */
static inline int write_text(const char *path, const char *text)
{
	return write_text_flags(path, text, O_TRUNC);
}

/* Contents of the file @path (read to its end) as a malloc()ed string, or NULL. */
static inline char *text_read(const char *path)
{
	size_t len = 0, cap = 1 << 16, n;
	char *buf;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return NULL;
	buf = malloc(cap + 1);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *more = realloc(buf, (cap *= 2) + 1);

			if (!more)
				free(buf);
			buf = more;
		}
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* The number in the file @path (a /proc/sys value), or -1. */
static inline long file_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The value of @key in file @path of "NAME VALUE" lines (debugfs, /proc/vmstat), or -1. */
static inline long long file_stat(const char *path, const char *key)
{
	char line[256], name[64];
	long long v, found = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", name, &v) == 2 && !strcmp(name, key))
			found = v;
	fclose(f);
	return found;
}

/*
 * The kallsyms type letter of @name in module @mod ("[bpf]": BPF text, a JIT-ed program, a
 * trampoline or a dispatcher image), or of its first entry when @mod is NULL; 0 if absent
 * or unreadable.
 */
static inline char kallsyms_type_in(const char *name, const char *mod)
{
	char line[512], sym[256], m[32], type, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	int n;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n = sscanf(line, "%*s %c %255s %31s", &type, sym, m);
		if (n >= 2 && !strcmp(sym, name) && (!mod || (n == 3 && !strcmp(m, mod))))
			found = type;
	}
	fclose(f);
	return found;
}

/* The kallsyms type letter of @name, or 0 if absent or unreadable. */
static inline char kallsyms_type(const char *name)
{
	return kallsyms_type_in(name, NULL);
}

/* Whether /proc/kallsyms names @name (any type). */
static inline int kallsyms_has(const char *name)
{
	return kallsyms_type(name) != 0;
}

/* Whether /proc/kallsyms names @name as BPF text, not as the kernel symbol of that name. */
static inline int bpf_ksym_has(const char *name)
{
	return kallsyms_type_in(name, "[bpf]") != 0;
}

/* execmem's debugfs statistics ("NAME VALUE" lines; the series' mm/vmalloc.c) */
#define EXECMEM_STATS	"/sys/kernel/debug/execmem"

/* Field @key of the execmem debugfs file, or -1 if it cannot be read. */
static inline long execmem_stat(const char *key)
{
	return file_stat(EXECMEM_STATS, key);
}

/*
 * Wait up to 20 s for the execmem statistic @key to drop to @want (programs and their
 * chunks are freed after an RCU grace period); its last value, -1 if unreadable.
 */
static inline long execmem_wait_below(const char *key, long want)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	long n = execmem_stat(key);
	int i;

	for (i = 0; i < 400 && n > want; i++) {
		nanosleep(&ts, NULL);
		n = execmem_stat(key);
	}
	return n;
}

/*
 * The execmem allocation count once it has not changed for 200 ms (programs and
 * trampolines of earlier tests are freed after an RCU grace period, by a work item),
 * waiting at most 10 s; -1 if EXECMEM_STATS cannot be read.
 */
static inline long settled_allocations(void)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	long prev = -2, n = file_stat(EXECMEM_STATS, "allocations");
	int i;

	for (i = 0; i < 50 && n != prev; i++) {
		nanosleep(&ts, NULL);
		prev = n;
		n = file_stat(EXECMEM_STATS, "allocations");
	}
	return n;
}

#endif /* GUEST_BPF_RAW_H */
