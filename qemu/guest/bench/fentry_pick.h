/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fentry_pick.h - kernel functions to attach fentry, fexit and fmod_ret programs to, for the
 * guest's benchmarks (bpf_batch_bench.c, bpf_load_bench.c): functions with BTF, at most 5
 * arguments and patchable by ftrace; for fentry and fexit networking functions the idle
 * guest does not call (tcp_ first, then udp, inet, ip, sock), for fmod_ret the functions of
 * the error-injection list (the only ones BPF_MODIFY_RETURN may attach to besides LSM hooks).
 */
#ifndef GUEST_FENTRY_PICK_H
#define GUEST_FENTRY_PICK_H

#include "../fentry_raw.h"

#define EI_LIST	"/sys/kernel/debug/error_injection/list"

static const char *const pick_prefixes[] = { "tcp_", "udp", "inet", "ip", "sock" };

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The first word of every line of @text, in place (the text is cut into words), sorted;
 * *@n gets their number. For bsearch() of a name: the lists have tens of thousands of
 * lines, too many for a scan per candidate under TCG.
 */
static char **sorted_words(char *text, size_t *n)
{
	size_t cap = 1024, k = 0;
	char **w = malloc(cap * sizeof(*w));
	char *line = text, *next;

	while (w && line && *line) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line[strcspn(line, " \t")] = '\0';
		if (k == cap) {
			char **m = realloc(w, (cap *= 2) * sizeof(*w));

			if (!m) {
				free(w);
				return NULL;
			}
			w = m;
		}
		w[k++] = line;
		line = next;
	}
	if (w)
		qsort(w, k, sizeof(*w), cmp_str);
	*n = k;
	return w;
}

static int has_word(char **w, size_t n, const char *name)
{
	return bsearch(&name, w, n, sizeof(*w), cmp_str) != NULL;
}

/*
 * Up to @max BTF ids of functions for @type into @ids, in the order described at the top;
 * returns their number, or -1 if the BTF or a list cannot be read.
 */
static int pick_funcs(enum bpf_attach_type type, uint32_t *ids, int max)
{
	char *avail = tracing_read("available_filter_functions");
	char *ei = type == BPF_MODIFY_RETURN ? text_read(EI_LIST) : NULL;
	char **aw = NULL, **ew = NULL;
	size_t an = 0, en = 0;
	struct btf_funcs bf;
	uint32_t i, p;
	int n = -1;

	if (!avail || (type == BPF_MODIFY_RETURN && !ei) || btf_funcs_load(&bf))
		goto out;
	aw = sorted_words(avail, &an);
	if (ei)
		ew = sorted_words(ei, &en);
	if (!aw || (ei && !ew))
		goto out_btf;
	n = 0;
	for (p = 0; p < (ew ? 1 : sizeof(pick_prefixes) / sizeof(pick_prefixes[0])); p++) {
		for (i = 0; i < bf.nfuncs && n < max; i++) {
			const char *name = bf.strs + bf.names[i];

			/* exit never returns: its fmod_ret trampoline would stay entered. */
			if (bf.nargs[i] > 5 || !has_word(aw, an, name) || strstr(name, "sys_exit"))
				continue;
			if (ew ? !has_word(ew, en, name) :
			    strncmp(name, pick_prefixes[p], strlen(pick_prefixes[p])))
				continue;
			ids[n++] = bf.ids[i];
		}
	}
out_btf:
	free(bf.data);
	free(bf.ids);
	free(bf.names);
	free(bf.nargs);
out:
	free(aw);
	free(ew);
	free(avail);
	free(ei);
	return n;
}

#endif /* GUEST_FENTRY_PICK_H */
