/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fentry_raw.h - fentry/fexit programs with raw bpf(2) (no libbpf) for the guest's test and
 * benchmark programs: kernel functions by name from the vmlinux BTF
 * (/sys/kernel/btf/vmlinux), the ftrace view of them (which functions ftrace can patch and
 * which it has patched), loading, single attach, and the BPF_TRACE_BATCH link of the series.
 */
#ifndef GUEST_FENTRY_RAW_H
#define GUEST_FENTRY_RAW_H

#include "bpf_raw.h"
#include <linux/btf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACING_DIR "/sys/kernel/debug/tracing"

/*
 * Syscall functions with BTF as the arch's syscall wrappers name them: PREFIX "getpid"
 * (x86-64's __x64_sys_ stubs have no BTF in 6.1; the __do_sys_ bodies do).
 */
#if defined(__x86_64__)
#define SYSCALL_PREFIX "__do_sys_"
#elif defined(__aarch64__)
#define SYSCALL_PREFIX "__arm64_sys_"
#else
#define SYSCALL_PREFIX "__riscv_sys_"
#endif

struct btf_funcs {
	char *data;		/* the whole BTF blob */
	const char *strs;	/* its string section */
	uint32_t nfuncs;
	uint32_t *ids;		/* type ids of the BTF_KIND_FUNC entries */
	uint32_t *names;	/* their name offsets into strs */
	uint32_t *nargs;	/* their numbers of arguments */
};

/* Bytes that follow a struct btf_type of @kind with @vlen members; -1 for an unknown kind. */
static inline long btf_extra(unsigned int kind, unsigned int vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * 12;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	}
	return -1;
}

/* Read the vmlinux BTF and index its functions. Returns 0, or -1 with a "# " message. */
static inline int btf_funcs_load(struct btf_funcs *bf)
{
	FILE *f = fopen("/sys/kernel/btf/vmlinux", "r");
	const struct btf_header *h;
	size_t len = 0, cap = 1 << 22, n;
	const char *p, *end;
	uint32_t id = 1, i;
	uint16_t *vlen;

	memset(bf, 0, sizeof(*bf));
	if (!f) {
		printf("# no /sys/kernel/btf/vmlinux\n");
		return -1;
	}
	bf->data = malloc(cap);
	while (bf->data && (n = fread(bf->data + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			bf->data = realloc(bf->data, cap *= 2);
	}
	fclose(f);
	h = (const void *)bf->data;
	if (!bf->data || len < sizeof(*h) || h->magic != BTF_MAGIC ||
	    h->hdr_len + (size_t)h->str_off + h->str_len > len) {
		printf("# /sys/kernel/btf/vmlinux: not BTF\n");
		return -1;
	}
	p = bf->data + h->hdr_len + h->type_off;
	end = p + h->type_len;
	bf->strs = bf->data + h->hdr_len + h->str_off;
	bf->ids = calloc(h->type_len / sizeof(struct btf_type) + 1, sizeof(*bf->ids));
	bf->names = calloc(h->type_len / sizeof(struct btf_type) + 1, sizeof(*bf->names));
	bf->nargs = calloc(h->type_len / sizeof(struct btf_type) + 1, sizeof(*bf->nargs));
	/* vlen of every type by id, for the FUNC_PROTO a FUNC points to */
	vlen = calloc(h->type_len / sizeof(struct btf_type) + 2, sizeof(*vlen));
	if (!bf->ids || !bf->names || !bf->nargs || !vlen)
		return -1;
	for (; p + sizeof(struct btf_type) <= end; id++) {
		const struct btf_type *t = (const void *)p;
		long extra = btf_extra(BTF_INFO_KIND(t->info), BTF_INFO_VLEN(t->info));

		if (extra < 0) {
			printf("# BTF type %u: unknown kind %u\n", id, BTF_INFO_KIND(t->info));
			free(vlen);
			return -1;
		}
		vlen[id] = BTF_INFO_VLEN(t->info);
		if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC) {
			bf->ids[bf->nfuncs] = id;
			bf->nargs[bf->nfuncs] = t->type;	/* the proto's id until below */
			bf->names[bf->nfuncs++] = t->name_off;
		}
		p += sizeof(*t) + extra;
	}
	for (i = 0; i < bf->nfuncs; i++)
		bf->nargs[i] = bf->nargs[i] < id ? vlen[bf->nargs[i]] : UINT32_MAX;
	free(vlen);
	return 0;
}

/* BTF type id of the function @name, or 0. */
static inline uint32_t btf_func_id(const struct btf_funcs *bf, const char *name)
{
	uint32_t i;

	for (i = 0; i < bf->nfuncs; i++)
		if (!strcmp(bf->strs + bf->names[i], name))
			return bf->ids[i];
	return 0;
}

/*
 * The struct @name in the blob btf_funcs_load() read into @bf, or NULL; its type id into
 * *@id.
 */
static inline const struct btf_type *btf_struct_find(const struct btf_funcs *bf,
						     const char *name, uint32_t *id)
{
	const struct btf_header *h = (const void *)bf->data;
	const char *p = bf->data + h->hdr_len + h->type_off, *end = p + h->type_len;

	for (*id = 1; p + sizeof(struct btf_type) <= end; (*id)++) {
		const struct btf_type *t = (const void *)p;
		long extra = btf_extra(BTF_INFO_KIND(t->info), BTF_INFO_VLEN(t->info));

		if (extra < 0)
			return NULL;
		if (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT &&
		    !strcmp(bf->strs + t->name_off, name))
			return t;
		p += sizeof(*t) + extra;
	}
	return NULL;
}

/*
 * BTF type id of the struct @name in the blob btf_funcs_load() read into @bf, or 0; with
 * *@member set to the index of its member @member_name (-1 if it has none of that name).
 */
static inline uint32_t btf_struct_member(const struct btf_funcs *bf, const char *name,
					 const char *member_name, int *member)
{
	uint32_t id, i;
	const struct btf_type *t = btf_struct_find(bf, name, &id);
	const struct btf_member *m = (const void *)(t + 1);

	*member = -1;
	if (!t)
		return 0;
	for (i = 0; i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(bf->strs + m[i].name_off, member_name))
			*member = i;
	return id;
}

/*
 * Byte offset of the member @member_name of the struct @name in the blob btf_funcs_load()
 * read into @bf; -1 if there is no such struct or member, or the member is a bitfield.
 */
static inline long btf_member_offset(const struct btf_funcs *bf, const char *name,
				     const char *member_name)
{
	uint32_t id, i, off;
	const struct btf_type *t = btf_struct_find(bf, name, &id);
	const struct btf_member *m = (const void *)(t + 1);

	for (i = 0; t && i < BTF_INFO_VLEN(t->info); i++) {
		if (strcmp(bf->strs + m[i].name_off, member_name))
			continue;
		off = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		if (off % 8 || (BTF_INFO_KFLAG(t->info) && BTF_MEMBER_BITFIELD_SIZE(m[i].offset)))
			return -1;
		return off / 8;
	}
	return -1;
}

/*
 * Whether the line list in @text (one "name [extra]" per line, as in ftrace's
 * available_filter_functions and enabled_functions) has @name as a word at a line start.
 */
static inline int ftrace_list_has(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while ((p = strstr(p, name))) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == ' ' ||
						     p[n] == '\t' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/* text_read() of the tracefs file @name. */
static inline char *tracing_read(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), TRACING_DIR "/%s", name);
	return text_read(path);
}

/* write_text() of @text to the tracefs file @name (replacing it): 0 or -errno. */
static inline int tracing_write(const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), TRACING_DIR "/%s", name);
	return write_text(path, text);
}

/*
 * BPF_TRACE_BATCH as the series adds it to include/uapi/linux/bpf.h: attach type and link
 * type 256, outside upstream's sequence of numbers (see the comment there), and
 * link_create.tracing_batch at the offset of link_create.target_btf_id. The guest programs
 * build against the distribution's (unpatched) uapi headers, so the layout is spelled out here.
 */
#define ATTACH_TRACE_BATCH	256
#define LINK_TYPE_TRACING_BATCH	256
#define TRACE_BATCH_MAX_CNT	1024

struct trace_batch_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t prog_fds __attribute__((aligned(8)));
	uint32_t cnt, err_idx;
};
_Static_assert(offsetof(union bpf_attr, link_create.target_btf_id) ==
	       offsetof(struct trace_batch_attr, prog_fds), "link_create layout");

/* bpf_link_info of a BPF_LINK_TYPE_TRACING_BATCH link: info.tracing_batch as the series has it. */
struct trace_batch_link_info {
	uint32_t type, id, prog_id;
	uint64_t prog_ids __attribute__((aligned(8)));	/* in/out: __u32 array */
	uint32_t count;		/* in: entries of prog_ids; out: the link's programs */
};
_Static_assert(offsetof(struct bpf_link_info, raw_tracepoint.tp_name) ==
	       offsetof(struct trace_batch_link_info, prog_ids), "bpf_link_info layout");

/*
 * Load "r1 = map; key = @slot; r0 = lookup; if r0: *r0 += 1 (atomic); return 0" as an
 * @attach_type program (BPF_TRACE_FENTRY, BPF_TRACE_FEXIT or BPF_MODIFY_RETURN, for which the
 * 0 lets the function run) for the vmlinux function with BTF id @btf_id. Returns the fd or
 * -errno; the verifier log goes to @log.
 */
static inline int fentry_load(enum bpf_attach_type attach_type, uint32_t btf_id, int map,
			      int slot, char *log, unsigned int log_size)
{
	const struct bpf_insn insns[] = {
		LD_MAP_FD(BPF_REG_1, map),
		ST_W(BPF_REG_10, -4, slot),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 2),
		MOV64_IMM(BPF_REG_1, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};

	return prog_load_attach(BPF_PROG_TYPE_TRACING, attach_type, btf_id, insns,
				sizeof(insns) / sizeof(insns[0]), log, log_size);
}

/*
 * Load a struct_ops program for bpf_dummy_ops.test_2 returning a1 + a4, which
 * BPF_PROG_TEST_RUN runs through a trampoline the kernel generates (and frees) per run:
 * with the context { 0, a1, a2, a3, a4 } it returns a1 + a4. Returns the fd or -errno
 * (-ENOENT without bpf_dummy_ops.test_2 in the vmlinux BTF); the verifier log goes to @log.
 */
static inline int dummy_ops_load(char *log, unsigned int log_size)
{
	const struct bpf_insn insns[] = {
		LDX_DW(BPF_REG_2, BPF_REG_1, 8),	/* a1 (int) */
		INSN(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_2, 0, 0),	/* w2 = w2 */
		LDX_DW(BPF_REG_3, BPF_REG_1, 32),	/* a4 (unsigned long) */
		MOV64_REG(BPF_REG_0, BPF_REG_2),
		INSN(BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_0, BPF_REG_3, 0, 0),
		EXIT(),
	};
	struct btf_funcs bf;
	uint32_t st = 0;
	int member = -1;

	log[0] = '\0';
	if (!btf_funcs_load(&bf)) {
		st = btf_struct_member(&bf, "bpf_dummy_ops", "test_2", &member);
		free(bf.data);
		free(bf.ids);
		free(bf.names);
		free(bf.nargs);
	}
	if (!st || member < 0)
		return -ENOENT;
	return prog_load_attach(BPF_PROG_TYPE_STRUCT_OPS, member, st, insns,
				sizeof(insns) / sizeof(insns[0]), log, log_size);
}

/* Attach one tracing program to the function it was loaded for: the link fd or -errno. */
static inline int fentry_attach(int prog_fd, enum bpf_attach_type attach_type)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = prog_fd;
	a.link_create.attach_type = attach_type;
	fd = sys_bpf(BPF_LINK_CREATE, &a);
	return fd < 0 ? -errno : fd;
}

/*
 * BPF_LINK_CREATE with BPF_TRACE_BATCH for @cnt programs at @fds (@fds_addr overrides the
 * pointer when nonzero, to pass a bad one). Returns the link fd or -errno; *@err_idx gets
 * the kernel's err_idx output (UINT32_MAX if it did not write one).
 */
static inline int batch_attach(const uint32_t *fds, uint32_t cnt, uint64_t fds_addr,
			       uint32_t *err_idx)
{
	union bpf_attr a;
	struct trace_batch_attr *b = (void *)&a;
	int fd;

	memset(&a, 0, sizeof(a));
	b->attach_type = ATTACH_TRACE_BATCH;
	b->prog_fds = fds_addr ? fds_addr : (uintptr_t)fds;
	b->cnt = cnt;
	b->err_idx = UINT32_MAX;
	fd = sys_bpf(BPF_LINK_CREATE, &a);
	if (fd < 0)
		fd = -errno;
	*err_idx = b->err_idx;
	return fd;
}

#endif /* GUEST_FENTRY_RAW_H */
