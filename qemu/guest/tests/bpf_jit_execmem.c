// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_jit_execmem.c - BPF JIT images on execmem, through the real bpf(2) syscall.
 *
 * Cases (KTAP on stdout):
 *   fleet_load_run_free  load 100 socket filters whose sizes follow the fleet mix (half
 *                        below 500 bytes of code, three quarters below 2 kB, the rest up to
 *                        64 kB), run each once (BPF_PROG_TEST_RUN: the return value proves
 *                        the copy into place), check that each is JIT-ed and is one more
 *                        execmem allocation, that no execmem entry is writable, then close
 *                        them all and wait for the allocations to go back to where they were
 *   subprog_call         a program calling a subprogram (bpf2bpf: the JIT's extra pass)
 *                        returns what the subprogram computed, with two JIT-ed functions
 *   subprog_fault        a subprogram whose load through a NULL BTF pointer faults
 *                        (BPF_PROBE_MEM) returns what the exception fixup gives (0 read):
 *                        the JIT found the exception table after the extra pass (x86-64
 *                        reads 0 without a fault; skipped without vmlinux BTF)
 *   kallsyms             /proc/kallsyms names a loaded program at its JIT-ed address
 *   large_image          a program whose JIT-ed code is larger than 2 MiB, more than one
 *                        execmem chunk holds (the instruction count measured on this arch's
 *                        JIT): it loads, returns the right value, its image is a vmalloc area
 *                        of its own (not execmem: the settled allocation count is the same
 *                        while it is loaded and after it is closed), no
 *                        kernel mapping is writable and executable while it is loaded
 *                        (ptdump, where the guest has it), and closing it frees the area
 *   xdp_dispatcher       an XDP program attached to lo (generic XDP, through the BPF
 *                        dispatcher) counts the UDP packets sent to 127.0.0.1
 *   dispatcher_image     after that attach and detach: on x86_64, whose JIT builds
 *                        dispatchers, the dispatcher's image (execmem text) is in kallsyms as
 *                        BPF text; elsewhere there is no such image and the execmem
 *                        allocations are back where they were before the attach (an image
 *                        that can never be filled would pin a chunk for the rest of the boot)
 *
 * fleet_load_run_free is skipped on a kernel whose BPF JIT does not use execmem yet: x86
 * with bpf_prog_pack (its allocator is in /proc/kallsyms), an arch whose JIT still takes
 * pages of its own per program (a program's load adds a vmalloc area of
 * bpf_jit_binary_alloc() or bpf_jit_alloc_exec() to /proc/vmallocinfo), or no
 * /sys/kernel/debug/execmem at all. dispatcher_image is skipped outside x86_64 on a kernel
 * whose dispatcher still takes its image from bpf_prog_pack (6.1 does so on every arch).
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include "../bpf_raw.h"
#include "../fentry_raw.h"
#include "../ktap.h"
#include "../ptdump.h"

#define NPROGS		100
#define LOG_SIZE	65536
#define MAX_ADDS	16000	/* instructions of the largest programs: 64 kB of code */
#define LARGE_IMM	0x12345678	/* an immediate wider than any JIT's short add encoding */
#define LARGE_PROBE	4096		/* instructions of the program measuring bytes per add */
#define LARGE_BYTES	(2304 * 1024)	/* code of large_image: a quarter above 2 MiB */
#define LARGE_MIN_AREA	(2048 * 1024 + 4096)	/* larger than any execmem chunk */
#define LARGE_SLACK	(64 * 1024)	/* an image's area: header, alignment, guard page */
#define LARGE_MAX_AREAS	256

static char logbuf[LOG_SIZE];

/* vmalloc areas of the old per-program JIT allocation in /proc/vmallocinfo; -1 if unreadable. */
static long jit_page_areas(void)
{
	char line[512];
	long n = 0;
	FILE *f = fopen("/proc/vmallocinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "bpf_jit_binary_alloc") || strstr(line, "bpf_jit_alloc_exec");
	fclose(f);
	return n;
}

/* The info of program @fd with room for @nfuncs JIT-ed addresses and lengths; 0 or -1. */
static int prog_info(int fd, struct bpf_prog_info *info, uint64_t *ksyms, uint32_t *lens,
		     uint32_t nfuncs)
{
	memset(info, 0, sizeof(*info));
	info->nr_jited_ksyms = nfuncs;
	info->jited_ksyms = (uintptr_t)ksyms;
	info->nr_jited_func_lens = nfuncs;
	info->jited_func_lens = (uintptr_t)lens;
	return prog_info_by_fd(fd, info) ? -1 : 0;
}

static void fleet_load_run_free(void)
{
	long base = settled_allocations(), after, wrong = 0, notjit = 0, total = 0;
	int fds[NPROGS], i, n = 0;
	struct bpf_prog_info info;
	uint64_t ksym;
	uint32_t len;

	for (i = 0; i < NPROGS; i++) {
		fds[i] = load_sized_filter(i, fleet_adds(i, MAX_ADDS));
		if (fds[i] < 0) {
			result(0, "fleet_load_run_free", "program %d (%d insns) not loaded: %s",
			       i, fleet_adds(i, MAX_ADDS) + 2, strerror(-fds[i]));
			goto out;
		}
		n++;
		if (pkt_run_once(fds[i]) != i + fleet_adds(i, MAX_ADDS))
			wrong++;
		if (prog_info(fds[i], &info, &ksym, &len, 1) || !info.jited_prog_len)
			notjit++;
		else
			total += info.jited_prog_len;
	}
	after = execmem_stat("allocations");
	if (wrong || notjit || after != base + NPROGS || execmem_stat("writable_entries")) {
		result(0, "fleet_load_run_free",
		       "%ld wrong results, %ld not JIT-ed, allocations %ld -> %ld (want +%d), %ld writable entries",
		       wrong, notjit, base, after, NPROGS, execmem_stat("writable_entries"));
		goto out;
	}
	printf("# fleet_load_run_free: %d programs, %ld bytes JIT-ed, %ld chunks, %ld bytes used\n",
	       NPROGS, total, execmem_stat("chunks"), execmem_stat("bytes_used"));
	for (i = 0; i < n; i++)
		close(fds[i]);
	n = 0;
	after = execmem_wait_below("allocations", base);
	result(after == base, "fleet_load_run_free",
	       "allocations after closing all: %ld (before loading: %ld)", after, base);
out:
	for (i = 0; i < n; i++)
		close(fds[i]);
}

static void subprog_call(void)
{
	/* r1 = 7; r0 = sub(r1); r0 += 100; exit;  sub: r0 = r1 * 3 + 1 */
	const struct bpf_insn insns[] = {
		MOV64_IMM(1, 7),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 2),
		ADD64_IMM(0, 100),
		EXIT(),
		MOV64_REG(0, 1),
		INSN(BPF_ALU64 | BPF_MUL | BPF_K, 0, 0, 0, 3),
		ADD64_IMM(0, 1),
		EXIT(),
	};
	int fd = prog_load_type(BPF_PROG_TYPE_SOCKET_FILTER, insns, 8, logbuf, LOG_SIZE);
	struct bpf_prog_info info;
	uint64_t ksyms[2];
	uint32_t lens[2];
	long ret;

	if (fd < 0) {
		result(0, "subprog_call", "load: %s; verifier log: %.300s", strerror(-fd), logbuf);
		return;
	}
	ret = pkt_run_once(fd);
	if (prog_info(fd, &info, ksyms, lens, 2))
		info.nr_jited_func_lens = 0;
	result(ret == 122 && info.nr_jited_func_lens == 2 && lens[0] && lens[1], "subprog_call",
	       "returned %ld (want 122), %u JIT-ed functions (want 2)", ret,
	       info.nr_jited_func_lens);
	close(fd);
}

/*
 * A subprogram's faulting load of a BTF pointer (BPF_PROBE_MEM) is fixed up through the
 * exception table the JIT relocated from its RW buffer in the extra pass; a wrong table
 * oopses instead. current->pi_blocked_on is NULL outside a PI futex wait: reading through it
 * faults and reads 0 on arm64 and riscv64. x86-64's JIT tests the address first and reads 0
 * without a fault, so there the case checks the result only.
 */
static void subprog_fault(void)
{
	struct btf_funcs bf;
	long off = btf_funcs_load(&bf) ? -1 : btf_member_offset(&bf, "task_struct",
								 "pi_blocked_on");
	/* main: r0 = sub(); exit;  sub: r0 = *(*(current + off)) + 7; exit */
	const struct bpf_insn insns[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1),
		EXIT(),
		CALL(BPF_FUNC_get_current_task_btf),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 0, (int16_t)off, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 1, 0, 0),
		ADD64_IMM(0, 7),
		EXIT(),
	};
	uint64_t ctx[1] = { 0 }, ksyms[2];
	struct bpf_prog_info info;
	uint32_t lens[2], ret;
	int fd, err;

	if (!bf.data && access("/sys/kernel/btf/vmlinux", F_OK)) {
		printf("ok %d subprog_fault # SKIP no vmlinux BTF in this build\n", ++casenum);
		return;
	}
	free(bf.data);
	free(bf.ids);
	free(bf.names);
	free(bf.nargs);
	if (off < 0 || off > INT16_MAX) {
		result(0, "subprog_fault", "no offset of task_struct.pi_blocked_on in the vmlinux BTF");
		return;
	}
	fd = prog_load_type(BPF_PROG_TYPE_RAW_TRACEPOINT, insns, sizeof(insns) / sizeof(insns[0]),
			    logbuf, LOG_SIZE);
	if (fd < 0) {
		result(0, "subprog_fault", "load: %s; verifier log: %.300s", strerror(-fd), logbuf);
		return;
	}
	err = ctx_test_run(fd, ctx, sizeof(ctx), -1, &ret);
	if (err)
		ret = err;
	if (prog_info(fd, &info, ksyms, lens, 2))
		info.nr_jited_func_lens = 0;
	result(ret == 7 && info.nr_jited_func_lens == 2, "subprog_fault",
	       "returned %d (want 7: the faulting load read 0), %u JIT-ed functions (want 2)",
	       (int)ret, info.nr_jited_func_lens);
	close(fd);
}

static void kallsyms_case(void)
{
	char line[512], want[32], sym[256];
	int fd = load_sized_filter(1, 10), found = 0;
	struct bpf_prog_info info;
	uint64_t ksym = 0;
	uint32_t len;
	FILE *f;

	if (fd < 0 || prog_info(fd, &info, &ksym, &len, 1) || !ksym) {
		result(0, "kallsyms", "no JIT-ed program to look up (load: %d)", fd);
		goto out;
	}
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)ksym);
	f = fopen("/proc/kallsyms", "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, want, 16) && sscanf(line, "%*s %*c %255s", sym) == 1 &&
			!strncmp(sym, "bpf_prog_", 9);
	if (f)
		fclose(f);
	result(found, "kallsyms", "a bpf_prog_ symbol at %s: %s", want, found ? sym : "none");
out:
	if (fd >= 0)
		close(fd);
}

/*
 * Sizes of the vmalloc areas of at least LARGE_MIN_AREA bytes in /proc/vmallocinfo, at most
 * @max of them into @sizes, each printed as a diagnostic line if @show; how many there are,
 * -1 if unreadable.
 */
static long large_areas(unsigned long *sizes, long max, int show)
{
	unsigned long size;
	char line[512];
	long n = 0;
	FILE *f = fopen("/proc/vmallocinfo", "r");

	if (!f)
		return -1;
	/*
	 * The range may print as 0x(____ptrval____)-...: only the size after it is read.
	 * Freed areas waiting for a lazy purge are listed too: not counted.
	 */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %lu", &size) == 1 && size >= LARGE_MIN_AREA &&
		    !strstr(line, "unpurged")) {
			if (n < max)
				sizes[n] = size;
			n++;
			if (show)
				printf("# large_image: area %s", line);
		}
	fclose(f);
	return n;
}

/*
 * large_areas() into @sizes (at most @max, LARGE_MAX_AREAS at most) twice in a row with the
 * same result: /proc/vmallocinfo is a seq_file read a page at a time, resumed by position,
 * so an area freed or added meanwhile (earlier tests' areas are purged lazily) can make one
 * read skip or repeat another area. The count; -1 if unreadable or never the same twice in
 * 20 tries.
 */
static long stable_large_areas(unsigned long *sizes, long max)
{
	static unsigned long again[LARGE_MAX_AREAS];
	long n = large_areas(sizes, max, 0), m;
	int tries;

	for (tries = 0; tries < 20 && n >= 0; tries++, n = m) {
		m = large_areas(again, max, 0);
		if (m == n && !memcmp(again, sizes, (n < max ? n : max) * sizeof(*sizes)))
			return n;
		memcpy(sizes, again, max * sizeof(*sizes));
	}
	return -1;
}

/*
 * How many areas of /proc/vmallocinfo (or of @sizes, the @n from large_areas(), if @sizes)
 * can hold a JIT image of @len bytes: its header and guard page included, at most
 * LARGE_SLACK bytes more. The program's instructions take an area of their own, larger than
 * LARGE_MIN_AREA on x86_64, whose size is far from that of the image.
 */
static long image_areas(const unsigned long *sizes, long n, unsigned long len)
{
	unsigned long now[LARGE_MAX_AREAS];
	long i, c = 0;

	if (!sizes) {
		n = stable_large_areas(now, LARGE_MAX_AREAS);
		sizes = now;
	}
	if (n < 0 || n > LARGE_MAX_AREAS)
		return -1;
	for (i = 0; i < n; i++)
		c += sizes[i] > len && sizes[i] <= len + LARGE_SLACK;
	return c;
}

/* Wait up to 20 s for image_areas() of @len to drop to @want; the last count. */
static long wait_image_areas(unsigned long len, long want)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	long n = image_areas(NULL, 0, len);
	int i;

	for (i = 0; i < 400 && n != want; i++) {
		nanosleep(&ts, NULL);
		n = image_areas(NULL, 0, len);
	}
	return n;
}

static void large_image(void)
{
	static unsigned long before[LARGE_MAX_AREAS];
	long allocs = settled_allocations(), nbefore, areas, loaded, during, closed, after, wx = 0;
	long ranges = 0;
	const char *ptdump = ptdump_path();
	struct bpf_prog_info info;
	int fd, adds, per;
	uint32_t len, want;
	uint64_t ksym;
	char first[512] = "";
	long ret;

	fd = load_add_filter(0, LARGE_PROBE, LARGE_IMM);
	if (fd < 0 || prog_info(fd, &info, &ksym, &len, 1) || !info.jited_prog_len) {
		result(0, "large_image", "probe of %d adds not loaded or not JIT-ed: %s",
		       LARGE_PROBE, fd < 0 ? strerror(-fd) : "no JIT-ed length");
		goto out;
	}
	close(fd);
	execmem_wait_below("allocations", allocs);
	/* Rounded down: the prologue is in the probe's length; more adds, never fewer. */
	per = info.jited_prog_len / LARGE_PROBE ? info.jited_prog_len / LARGE_PROBE : 1;
	adds = LARGE_BYTES / per + 1;
	want = (uint32_t)((uint64_t)adds * LARGE_IMM);
	nbefore = stable_large_areas(before, LARGE_MAX_AREAS);
	fd = load_add_filter(0, adds, LARGE_IMM);
	if (fd < 0) {
		result(0, "large_image", "%d adds (%d bytes each) not loaded: %s", adds, per,
		       strerror(-fd));
		return;
	}
	ret = pkt_run_once(fd);
	if (prog_info(fd, &info, &ksym, &len, 1))
		info.jited_prog_len = 0;
	large_areas(NULL, 0, 1);
	areas = image_areas(before, nbefore, info.jited_prog_len);
	loaded = image_areas(NULL, 0, info.jited_prog_len);
	/*
	 * Settled, as after closing below: programs and trampolines of earlier
	 * tests may still be on their way out (an RCU grace period and a work
	 * item under TCG), and the count they move is global.
	 */
	during = settled_allocations();
	if (ptdump)
		wx = ptdump_wx(ptdump, &ranges, first, sizeof(first));
	close(fd);
	fd = -1;
	printf("# large_image: %d adds, %u bytes JIT-ed, returned %ld (want %u), vmalloc areas that fit the image %ld -> %ld, %s: %ld ranges, %ld W+X %s\n",
	       adds, info.jited_prog_len, ret, want, areas, loaded,
	       ptdump ? ptdump : "no ptdump", ranges, wx, first);
	after = wait_image_areas(info.jited_prog_len, areas);
	if (after != areas)
		large_areas(NULL, 0, 1);
	/* An execmem allocation of the image would be given back by the close. */
	closed = settled_allocations();
	result(ret == want && info.jited_prog_len > 2048 * 1024 && areas >= 0 &&
	       loaded == areas + 1 && wx == 0 && during == closed &&
	       after == areas,
	       "large_image",
	       "execmem allocations %ld before, %ld while loaded, %ld after closing (want the last two equal); areas that fit the image %ld while loaded (want %ld), %ld after closing (want %ld)",
	       allocs, during, closed, loaded, areas + 1, after, areas);
out:
	if (fd >= 0)
		close(fd);
}

/* Whether the arch's JIT builds BPF dispatcher images (arch_prepare_bpf_dispatcher()). */
#ifdef __x86_64__
#define JIT_HAS_DISPATCHER	1
#else
#define JIT_HAS_DISPATCHER	0
#endif

static void dispatcher_image(long before)
{
	int image = bpf_ksym_has("bpf_dispatcher_xdp");
	long after;

	if (JIT_HAS_DISPATCHER) {
		result(image, "dispatcher_image", "dispatcher image %sin kallsyms as BPF text",
		       image ? "" : "not ");
		return;
	}
	if (kallsyms_has("bpf_prog_pack_alloc")) {
		printf("ok %d dispatcher_image # SKIP the dispatcher takes its image from bpf_prog_pack in this tree, on every arch\n",
		       ++casenum);
		return;
	}
	after = execmem_wait_below("allocations", before);
	result(!image && after == before, "dispatcher_image",
	       "dispatcher image %sin kallsyms as BPF text (want none); execmem allocations %ld before the XDP attach, %ld after the detach",
	       image ? "" : "not ", before, after);
}

static void xdp_dispatcher(void)
{
	/* map[0]++ ; return XDP_PASS */
	int map = map_create(BPF_MAP_TYPE_ARRAY, 8, 1), fd = -1, link = -1, sock = -1;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	long before = settled_allocations();
	uint64_t count = 0;
	union bpf_attr a;
	int i;

	if (map < 0) {
		result(0, "xdp_dispatcher", "map: %s", strerror(errno));
		goto out;
	}
	{
		const struct bpf_insn insns[] = {
			ST_W(10, -4, 0),
			LD_MAP_FD(1, map),
			MOV64_REG(2, 10),
			ADD64_IMM(2, -4),
			CALL(BPF_FUNC_map_lookup_elem),
			JEQ_IMM(0, 0, 2),
			MOV64_IMM(1, 1),
			INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
			MOV64_IMM(0, XDP_PASS),
			EXIT(),
		};
		fd = prog_load_attach(BPF_PROG_TYPE_XDP, BPF_XDP, 0, insns,
				      sizeof(insns) / sizeof(insns[0]), logbuf, LOG_SIZE);
	}
	if (fd < 0) {
		result(0, "xdp_dispatcher", "load: %s; verifier log: %.300s", strerror(-fd),
		       logbuf);
		goto out;
	}
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = fd;
	a.link_create.target_ifindex = 1;	/* lo */
	a.link_create.attach_type = BPF_XDP;
	a.link_create.flags = 1U << 1;		/* XDP_FLAGS_SKB_MODE: generic XDP */
	link = sys_bpf(BPF_LINK_CREATE, &a);
	if (link < 0) {
		result(0, "xdp_dispatcher", "attach to lo: %s", strerror(errno));
		goto out;
	}
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	i = sock < 0 ? -errno : lo_up(sock);
	if (i) {
		result(0, "xdp_dispatcher", "no UDP socket or lo not up: %s", strerror(-i));
		goto out;
	}
	for (i = 0; i < 3; i++)
		sendto(sock, "ping", 4, 0, (struct sockaddr *)&to, sizeof(to));
	/* lo delivers through the backlog, in softirq context: allow it a second. */
	for (i = 0; i < 20 && count < 3; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		map_lookup(map, 0, &count);
	}
	result(count >= 3, "xdp_dispatcher", "%llu packets counted (want >= 3)",
	       (unsigned long long)count);
out:
	if (sock >= 0)
		close(sock);
	if (link >= 0)
		close(link);
	if (fd >= 0)
		close(fd);
	if (map >= 0)
		close(map);
	if (link >= 0)
		dispatcher_image(before);
	else
		result(0, "dispatcher_image", "no XDP attach");
}

int main(void)
{
	const char *why = NULL;
	long areas;
	int fd;

	printf("KTAP version 1\n1..7\n");
	if (kallsyms_has("bpf_prog_pack_alloc"))
		why = "the BPF JIT uses bpf_prog_pack in this tree";
	else if (execmem_stat("allocations") < 0)
		why = "no " EXECMEM_STATS " in this tree";
	areas = jit_page_areas();
	fd = load_sized_filter(0, 10);
	if (!why && fd >= 0 && jit_page_areas() > areas)
		why = "this arch's JIT takes pages of its own per program in this tree";
	if (fd >= 0)
		close(fd);
	if (why)
		printf("ok %d fleet_load_run_free # SKIP %s\n", ++casenum, why);
	else
		fleet_load_run_free();
	subprog_call();
	subprog_fault();
	kallsyms_case();
	large_image();
	xdp_dispatcher();
	return failures ? 1 : 0;
}
