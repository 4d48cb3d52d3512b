// SPDX-License-Identifier: GPL-2.0
/*
 * init.c - PID 1 of the harness guest.
 *
 * Mounts proc, sysfs, devtmpfs and debugfs, runs the tests listed in /etc/tests.list one
 * after another, prints their results as KTAP on the console and powers the machine off.
 *
 * Each line of /etc/tests.list is
 *
 *	NAME KIND MODULE [MODULE ARGUMENTS...]
 *
 * NAME is the KTAP test name, MODULE a file in /lib/modules loaded with finit_module(2), and
 * KIND says how the kernel log the module printed while loading is turned into KTAP:
 *
 *	test_bpf	"[CASE: ]Summary: P PASSED, F FAILED[, [J/R JIT'ed]]" lines, one case
 *			each (CASE "tests" when absent); a case fails if F > 0 or fewer than
 *			R of R tests were JIT-ed (with net.core.bpf_jit_enable=0: if any was,
 *			as the interpreter is then what must run them).
 *	test_vmalloc	"Summary: CASE passed: P failed: F ..." lines, one case per CASE,
 *			summed over the worker threads; a case fails if F > 0.
 *	ktap		the module prints KTAP itself (KUnit); its lines are nested as they are.
 *	exec		MODULE is a program in /bin (qemu/guest/tests/MODULE.c) that prints
 *			KTAP on its standard output; nested like ktap. Arguments are passed on.
 *	test_verifier	MODULE is the BPF selftest runner test_verifier in /bin (built from
 *			the tree by scripts/build-selftests.sh), run with its standard error;
 *			each "#N/p" and "#N/u" block of its output is one case
 *			(report_test_verifier).
 *	test_progs	MODULE is the BPF selftest runner test_progs in /bin, built from the
 *			suites of qemu/test_progs.allow only, run in /lib/bpf (the BPF objects
 *			it opens by name); each result line of its output is one case
 *			(report_test_progs).
 *	kunit		MODULE is a built-in KUnit suite, run at boot; its results are read
 *			from /sys/kernel/debug/kunit/MODULE/results (CONFIG_KUNIT_DEBUGFS)
 *			and nested like ktap. No arguments.
 *
 * A module, program or suite that is missing gives "# SKIP" (not built in this tree). Kernel
 * command-line arguments of the form MODULE.PARAM=VALUE are appended to that module's
 * arguments, as modprobe does; harness.only=NAME[,NAME...] runs only the named tests (a
 * name tests.list does not have is reported "not ok"; an empty list runs nothing).
 * harness.list=LIST reads /etc/LIST.list instead of /etc/tests.list (qemu/guest/LIST.list,
 * e.g. bench: benchmarks, which ordinary runs leave out; planted: the planted failures of
 * tests/planted-test.sh).
 *
 * A watchdog bounds every test: after harness.test_timeout=SECONDS (default
 * DEFAULT_TEST_TIMEOUT; 0: none) it prints "# harness: watchdog: NAME ..." naming the test
 * that hangs, asks the kernel for its blocked tasks (sysrq w, where built) and powers the
 * machine off, so that a hang costs that long, not the whole boot timeout, and names itself.
 *
 * Keep the console quiet (loglevel=5) so that only warnings and worse interleave with KTAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS	64
#define SYSLOG_ACTION_CONSOLE_LEVEL	8	/* klogctl(2); glibc has no name for it */
#define KILLED_BY	256	/* run_program()'s status of a program killed by signal N: 256 + N */
#define DEFAULT_TEST_TIMEOUT	600	/* seconds; test_bpf, the longest, takes 150 under TCG */
#define MAX_CASES	256
#define MAX_DIAG	40
#define LINE_MAX_LEN	1024

struct test {
	char *name;
	char *kind;
	char *module;
	char args[LINE_MAX_LEN];
};

struct kcase {
	char name[96];
	long passed;
	long failed;
	long jited;
	long run;
	int has_jit;
};

static char cmdline[4096];

static void out(const char *fmt, ...)
{
	char buf[LINE_MAX_LEN + 128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	if (write(STDOUT_FILENO, buf, n) < 0)
		return;
}

static void read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

/* Value of KEY=VALUE on the kernel command line, copied into @val; 0 if absent. */
static int cmdline_get(const char *key, char *val, size_t size)
{
	size_t klen = strlen(key);
	const char *p = cmdline;

	while (*p) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, " \n");

			if (n >= size)
				n = size - 1;
			memcpy(val, p + klen + 1, n);
			val[n] = '\0';
			return 1;
		}
		p += strcspn(p, " \n");
	}
	return 0;
}

/* Append MODULE.PARAM=VALUE arguments of the command line to @args. */
static void cmdline_module_args(const char *module, char *args, size_t size)
{
	char prefix[128];
	const char *p = cmdline;
	size_t plen;

	snprintf(prefix, sizeof(prefix), "%.*s.", (int)strcspn(module, "."), module);
	plen = strlen(prefix);
	while (*p) {
		size_t n;

		while (*p == ' ' || *p == '\n')
			p++;
		n = strcspn(p, " \n");
		if (n > plen && !strncmp(p, prefix, plen)) {
			size_t len = strlen(args);

			snprintf(args + len, size - len, "%s%.*s", len ? " " : "",
				 (int)(n - plen), p + plen);
		}
		p += n;
	}
}

static int selected(const char *name)
{
	char only[512], *tok, *save;

	if (!cmdline_get("harness.only", only, sizeof(only)))
		return 1;
	for (tok = strtok_r(only, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, name))
			return 1;
	return 0;
}

/* Add a "not listed" entry for every harness.only name that tests.list does not have. */
static int add_unlisted(struct test *tests, int n, const char *listed)
{
	char only[512], *tok, *save;

	if (!cmdline_get("harness.only", only, sizeof(only)))
		return n;
	for (tok = strtok_r(only, ",", &save); tok && n < MAX_TESTS;
	     tok = strtok_r(NULL, ",", &save)) {
		char key[128];

		snprintf(key, sizeof(key), " %s ", tok);
		if (strstr(listed, key))
			continue;
		tests[n].name = strdup(tok);
		tests[n].kind = "unlisted";
		tests[n].module = "-";
		tests[n].args[0] = '\0';
		n++;
	}
	return n;
}

static int load_tests(struct test *tests)
{
	char line[LINE_MAX_LEN], listed[4096] = " ";
	int n = 0;
	char list[128] = "tests", path[160];
	FILE *f;

	cmdline_get("harness.list", list, sizeof(list));
	snprintf(path, sizeof(path), "/etc/%s.list", list);
	f = fopen(path, "r");
	if (!f) {
		out("# harness: cannot open %s: %s\n", path, strerror(errno));
		return 0;
	}
	while (n < MAX_TESTS && fgets(line, sizeof(line), f)) {
		char *save, *name, *kind, *module, *rest;

		if (line[0] == '#')
			continue;
		name = strtok_r(line, " \t\n", &save);
		kind = strtok_r(NULL, " \t\n", &save);
		module = strtok_r(NULL, " \t\n", &save);
		if (!name)
			continue;
		if (strlen(listed) + strlen(name) + 2 < sizeof(listed)) {
			strcat(listed, name);
			strcat(listed, " ");
		}
		if (!kind || !module) {
			out("# harness: bad line in tests.list for '%s'\n", name);
			continue;
		}
		if (!selected(name))
			continue;
		tests[n].name = strdup(name);
		tests[n].kind = strdup(kind);
		tests[n].module = strdup(module);
		rest = strtok_r(NULL, "\n", &save);
		snprintf(tests[n].args, sizeof(tests[n].args), "%s", rest ? rest : "");
		cmdline_module_args(module, tests[n].args, sizeof(tests[n].args));
		n++;
	}
	fclose(f);
	return add_unlisted(tests, n, listed);
}

/*
 * The messages of the kernel log records readable from @kfd (/dev/kmsg, opened
 * O_NONBLOCK, or -1 for none), one per line, in a buffer the caller frees (NULL without
 * memory).
 */
static char *kmsg_collect(int kfd)
{
	size_t len = 0, cap = 1 << 16;
	char *log = malloc(cap);
	char rec[8192];

	if (!log)
		return NULL;
	log[0] = '\0';
	for (;;) {
		ssize_t n;
		char *msg, *end;

		if (kfd < 0)
			break;
		n = read(kfd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten; go on with the next */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = '\0';
		n = strlen(msg);
		if (len + n + 2 > cap) {
			char *bigger = realloc(log, cap * 2 + n);

			if (!bigger)
				break;
			log = bigger;
			cap = cap * 2 + n;
		}
		memcpy(log + len, msg, n);
		len += n;
		log[len++] = '\n';
		log[len] = '\0';
	}
	return log;
}

/*
 * Load @path with @args and collect the kernel log records printed meanwhile into a
 * newline-separated buffer (caller frees). *@ret gets finit_module's result (0 or -errno).
 */
static char *run_module(const char *path, const char *args, int *ret)
{
	char *log;
	int kfd, mfd;

	kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kfd >= 0)
		lseek(kfd, 0, SEEK_END);
	mfd = open(path, O_RDONLY | O_CLOEXEC);
	*ret = mfd < 0 ? -errno : 0;
	if (mfd >= 0) {
		if (syscall(SYS_finit_module, mfd, args, 0))
			*ret = -errno;
		close(mfd);
	}
	log = kmsg_collect(kfd);
	if (kfd >= 0)
		close(kfd);
	return log;
}

static struct kcase *find_case(struct kcase *cases, int *n, const char *name)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(cases[i].name, name))
			return &cases[i];
	if (*n == MAX_CASES)
		return NULL;
	memset(&cases[*n], 0, sizeof(cases[*n]));
	snprintf(cases[*n].name, sizeof(cases[*n].name), "%s", name);
	return &cases[(*n)++];
}

/* test_bpf: "test_bpf: [NAME: ]Summary: P PASSED, F FAILED[, [J/R JIT'ed]]" */
static int parse_test_bpf(const struct test *t, char *line, struct kcase *cases, int *n)
{
	char *sum = strstr(line, "Summary: ");
	char name[96];
	struct kcase *c;
	long p, f, j, r;
	int k;

	if (!sum)
		return 0;
	/*
	 * The case name is the text between the module prefix and "Summary:"; the main test
	 * array has none and is called "tests" (a case may not be named like its suite: KTAP
	 * parsers take "ok N SUITE" as the end of the suite).
	 */
	snprintf(name, sizeof(name), "tests");
	if (!strncmp(line, t->name, strlen(t->name)) && line[strlen(t->name)] == ':') {
		char *s = line + strlen(t->name) + 1;

		while (*s == ' ')
			s++;
		if (s < sum) {
			int len = sum - s;

			while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == ':'))
				len--;
			if (len > 0)
				snprintf(name, sizeof(name), "%.*s", len, s);
		}
	}
	k = sscanf(sum, "Summary: %ld PASSED, %ld FAILED, [%ld/%ld JIT'ed]", &p, &f, &j, &r);
	if (k < 2)
		return 0;
	c = find_case(cases, n, name);
	if (!c)
		return 0;
	c->passed += p;
	c->failed += f;
	if (k == 4) {
		c->has_jit = 1;
		c->jited += j;
		c->run += r;
	}
	return 1;
}

/* test_vmalloc: "Summary: CASE passed: P failed: F repeat: ..." */
static int parse_test_vmalloc(const struct test *t, char *line, struct kcase *cases, int *n)
{
	char name[96];
	struct kcase *c;
	long p, f;

	(void)t;
	if (strncmp(line, "Summary: ", 9))
		return 0;
	if (sscanf(line, "Summary: %95s passed: %ld failed: %ld", name, &p, &f) != 3)
		return 0;
	c = find_case(cases, n, name);
	if (!c)
		return 0;
	c->passed += p;
	c->failed += f;
	return 1;
}

/* Print one test as a KTAP subtest; returns 1 if it passed. */
static int report_summary(int num, const struct test *t, const char *log, int ret,
			  int (*parse)(const struct test *, char *, struct kcase *, int *))
{
	static struct kcase cases[MAX_CASES];
	char *copy = strdup(log), *line, *save, jit[8] = "";
	int ncases = 0, ok = 1, diag = 0, i, jit_on;

	read_file("/proc/sys/net/core/bpf_jit_enable", jit, sizeof(jit));
	jit_on = jit[0] != '0';

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		parse(t, line, cases, &ncases);

	out("    KTAP version 1\n    # Subtest: %s\n    1..%d\n", t->name, ncases);
	for (i = 0; i < ncases; i++) {
		struct kcase *c = &cases[i];
		int pass = c->failed == 0 && (!c->has_jit || c->jited == (jit_on ? c->run : 0));

		if (c->has_jit)
			out("    # %s: %ld passed, %ld failed, %ld/%ld JIT'ed\n",
			    c->name, c->passed, c->failed, c->jited, c->run);
		else
			out("    # %s: %ld passed, %ld failed\n", c->name, c->passed, c->failed);
		out("    %s %d %s\n", pass ? "ok" : "not ok", i + 1, c->name);
		ok &= pass;
	}
	free(copy);
	if (!ncases) {
		out("# %s: no Summary line in the log; module load returned %d (%s)\n",
		    t->name, ret, strerror(-ret));
		ok = 0;
	}
	if (!ok) {
		/* Show the module's own failure lines. */
		copy = strdup(log);
		for (line = strtok_r(copy, "\n", &save); line && diag < MAX_DIAG;
		     line = strtok_r(NULL, "\n", &save)) {
			if (strstr(line, "FAIL") || strstr(line, "failed") ||
			    strstr(line, "rror")) {
				out("# %s\n", line);
				diag++;
			}
		}
		free(copy);
	}
	out("%s %d %s\n", ok ? "ok" : "not ok", num, t->name);
	return ok;
}

/*
 * exit_agrees - whether a test's exit status agrees with the results it reported
 * @ret: the program's exit status, KILLED_BY + the signal that killed it (run_program()),
 *       or a module's load result (0 or -errno)
 * @failed: whether any of its results failed
 *
 * A program killed by a signal (a crash after its last result), or one that ended with a
 * non-zero status although every result passed, has failed in a way its results do not
 * show.
 *
 * Return: 1 if the status agrees with the results, 0 if it is a failure of its own.
 */
static int exit_agrees(int ret, int failed)
{
	return ret == 0 || (ret < KILLED_BY && failed);
}

/* Say on the console how @t ended with @ret, for a result that exit_agrees() refused. */
static void exit_diag(const struct test *t, int ret)
{
	if (ret >= KILLED_BY)
		out("    # %s: killed by signal %d (%s)\n", t->name, ret - KILLED_BY,
		    strsignal(ret - KILLED_BY));
	else if (ret > 0)
		out("    # %s: exited with status %d although no result failed\n", t->name, ret);
	else
		out("    # %s: returned %d (%s) although no result failed\n", t->name, ret,
		    strerror(-ret));
}

/*
 * ktap: nest the module's or program's own KTAP output; passes if every top-level result
 * is "ok" and its exit status agrees (exit_agrees()); otherwise one more case, exit_status,
 * fails, and the nested plan counts it.
 */
static int report_ktap(int num, const struct test *t, const char *log, int ret)
{
	char *copy = strdup(log), *line, *save;
	int started = 0, results = 0, ok = 1, plan = -1, bad_exit;

	/* First pass: the top-level results, to know whether exit_status is added. */
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!started) {
			started = strstr(line, "TAP version") != NULL;
			continue;
		}
		if (!strncmp(line, "not ok ", 7))
			ok = 0;
		else if (plan < 0 && sscanf(line, "1..%d", &plan) != 1)
			plan = -1;
	}
	free(copy);
	bad_exit = started && !exit_agrees(ret, !ok);

	copy = strdup(log);
	started = 0;
	ok = 1;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!started && !strstr(line, "KTAP version") && !strstr(line, "TAP version"))
			continue;
		if (!started) {
			line = strstr(line, "TAP version") - (strstr(line, "KTAP version") ? 1 : 0);
			out("    %s\n    # Subtest: %s\n", line, t->name);
			started = 1;
			continue;
		}
		if (bad_exit && plan >= 0 && !strncmp(line, "1..", 3)) {
			out("    1..%d\n", plan + 1);
			plan = -1;	/* only the program's own plan, not a nested one */
			continue;
		}
		out("    %s\n", line);
		if (!strncmp(line, "not ok ", 7)) {
			ok = 0;
			results++;
		} else if (!strncmp(line, "ok ", 3)) {
			results++;
		}
	}
	free(copy);
	if (bad_exit) {
		exit_diag(t, ret);
		out("    not ok %d exit_status\n", results + 1);
		ok = 0;
	}
	if (!results) {
		out("# %s: no KTAP results in its output; it returned %d\n", t->name, ret);
		ok = 0;
	}
	out("%s %d %s\n", ok ? "ok" : "not ok", num, t->name);
	return ok;
}

/*
 * test_verifier, the runner of tools/testing/selftests/bpf/verifier/ *.c, prints a block
 * of lines per run of a test: "#N/p DESCR " as root or "#N/u DESCR " with CAP_SYS_ADMIN
 * dropped, then its result: "OK" (after "K cases " or "Did not run the program (WHY) ",
 * before " (NOTE: ...)"), "SKIP" or "SKIP (WHY)", or "FAIL..." followed by the reason and
 * the verifier log on the next lines. A test whose setup failed may first print one line
 * "Failed to ..." (a map, the BTF). The last line is "Summary: P PASSED, S SKIPPED,
 * F FAILED".
 */
enum tv_status { TV_PASS, TV_FAIL, TV_SKIP };

/* The length in bytes of DESCR in @s, the text after "#N/x ": up to its result. */
static size_t tv_descr_len(const char *s)
{
	static const char * const marks[] = {
		" FAIL", " SKIP", " Failed to ", " Did not run the program (", NULL
	};
	size_t cut = strlen(s), i, j;
	const char *m;

	for (i = 0; marks[i]; i++) {
		m = strstr(s, marks[i]);
		if (m && (size_t)(m - s) < cut)
			cut = m - s;
	}
	/* " OK" ends the line or precedes " (NOTE: ...)"; " K cases" may come before it. */
	for (m = strstr(s, " OK"); m; m = strstr(m + 1, " OK"))
		if (!m[3] || !strncmp(m + 3, " (NOTE: ", 8))
			break;
	if (m && (size_t)(m - s) < cut) {
		cut = m - s;
		if (cut > 6 && !strncmp(s + cut - 6, " cases", 6)) {
			for (j = cut - 6; j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9'; j--)
				;
			if (j < cut - 6 && j > 0 && s[j - 1] == ' ')
				cut = j - 1;
		}
	}
	while (cut > 0 && s[cut - 1] == ' ')
		cut--;
	return cut;
}

/*
 * The result that the text @s (the rest of a block's first line after DESCR, or a later line
 * of the block) gives: an enum tv_status, with the SKIP reason in @why (@size bytes), or -1
 * if @s is a setup message ("Failed to ...") or empty, so that the next line decides.
 */
static int tv_status_of(const char *s, char *why, size_t size)
{
	size_t len;

	while (*s == ' ')
		s++;
	len = strlen(s);
	why[0] = '\0';
	if (!len || !strncmp(s, "Failed to ", 10))
		return -1;
	if (!strncmp(s, "FAIL", 4))
		return TV_FAIL;
	if (!strncmp(s, "SKIP", 4)) {
		if (!strncmp(s + 4, " (", 2) && s[len - 1] == ')')
			snprintf(why, size, " %.*s", (int)(len - 7), s + 6);
		return TV_SKIP;
	}
	if ((len >= 2 && !strcmp(s + len - 2, "OK")) || strstr(s, "OK (NOTE: "))
		return TV_PASS;
	return TV_FAIL;
}

/*
 * A line "#N/p " or "#N/u " begins a block: returns the offset of what follows (0 if @line
 * begins none) and stores 'p' or 'u' in *@mode.
 */
static int tv_block_start(const char *line, char *mode)
{
	int nr, off = 0;

	if (sscanf(line, "#%d/%c %n", &nr, mode, &off) < 2 || (*mode != 'p' && *mode != 'u'))
		return 0;
	return off;
}

/* A runner's standard error (@err, libbpf's warnings; may be NULL): its first 10 lines. */
static void report_stderr(const char *err)
{
	int i;

	for (i = 0; err && *err && i < 10; i++) {
		size_t len = strcspn(err, "\n");

		out("    # stderr: %.*s\n", (int)len, err);
		err += len + (err[len] == '\n');
	}
}

/*
 * Print test_verifier's runs (@log: its standard output; @err: its standard error, or NULL)
 * as a KTAP subtest: one case "DESCR/p" or "DESCR/u" per block ('#' in DESCR becomes '_':
 * KTAP parsers end a name at '#'), each failure followed by up to 8 lines of its block as
 * diagnostics; a missing Summary line, or one that disagrees with the blocks, is one more
 * failed case. @ret is test_verifier's exit status. Returns 1 if no case failed.
 */
static int report_test_verifier(int num, const struct test *t, char *log, const char *err,
				int ret)
{
	long n[3] = { 0, 0, 0 }, sp = -1, ss = -1, sf = -1, nlines = 0, i, j, k, c, nr = 0;
	long total = 0, dup;
	char **seen = NULL;
	char **lines, *line, *save, *s, name[240], why[160], mode, next;
	int ok = 1, status, summary_ok = 0, off, dlen;

	for (s = log; *s; s++)
		nlines += *s == '\n';
	lines = calloc(nlines + 2, sizeof(*lines));
	if (!lines) {
		out("not ok %d %s # out of memory\n", num, t->name);
		return 0;
	}
	nlines = 0;
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		lines[nlines++] = line;

	/* Pass 0 counts the results (for the plan), pass 1 prints them. */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < nlines; i = j) {
			j = i + 1;
			off = tv_block_start(lines[i], &mode);
			if (!off) {
				long p, sk, f;

				/* The Summary line; other lines outside a block are noise. */
				if (sscanf(lines[i], "Summary: %ld PASSED, %ld SKIPPED, %ld FAILED",
					   &p, &sk, &f) == 3) {
					sp = p;
					ss = sk;
					sf = f;
				}
				continue;
			}
			while (j < nlines && !tv_block_start(lines[j], &next) &&
			       strncmp(lines[j], "Summary: ", 9))
				j++;
			s = lines[i] + off;
			dlen = tv_descr_len(s);
			status = tv_status_of(s + dlen, why, sizeof(why));
			for (c = i + 1; status < 0 && c < j; c++)
				status = tv_status_of(lines[c], why, sizeof(why));
			if (status < 0)
				status = TV_FAIL;
			if (!k) {
				n[status]++;
				continue;
			}
			snprintf(name, sizeof(name), "%.*s/%c", dlen, s, mode);
			for (s = name; *s; s++)
				if (*s == '#')
					*s = '_';
			/* A DESCR that 6.1 uses twice: the second case is "DESCR (2)/p". */
			for (c = dup = 0; c < nr; c++)
				dup += seen[c] && !strcmp(seen[c], name);
			if (nr < total)
				seen[nr] = strdup(name);
			if (dup)
				snprintf(name + strlen(name) - 2, sizeof(name) - strlen(name) + 2,
					 " (%ld)/%c", dup + 1, mode);
			ok &= status != TV_FAIL;
			out("    %s %ld %s%s%s\n", status == TV_FAIL ? "not ok" : "ok",
			    ++nr, name, status == TV_SKIP ? " # SKIP" : "", why);
			if (status == TV_FAIL) {
				s = lines[i] + off + dlen;
				out("    # %s\n", s + strspn(s, " "));
				for (c = i + 1; c < j && c <= i + 8; c++)
					out("    # %.200s\n", lines[c]);
			}
		}
		if (!k) {
			total = n[TV_PASS] + n[TV_SKIP] + n[TV_FAIL];
			seen = calloc(total + 1, sizeof(*seen));
			if (!seen) {
				free(lines);
				out("not ok %d %s # out of memory\n", num, t->name);
				return 0;
			}
			summary_ok = sp == n[TV_PASS] && ss == n[TV_SKIP] && sf == n[TV_FAIL] &&
				     exit_agrees(ret, sf > 0) && (ret != 0) == (sf > 0);
			out("    KTAP version 1\n    # Subtest: %s\n    1..%ld\n", t->name,
			    total + !summary_ok);
		}
	}
	free(lines);
	for (c = 0; c < total; c++)
		free(seen[c]);
	free(seen);
	if (!summary_ok) {
		out("    # %s exited with %d; passed/skipped/failed: Summary %ld/%ld/%ld (-1: no Summary), blocks %ld/%ld/%ld\n",
		    t->name, ret, sp, ss, sf, n[TV_PASS], n[TV_SKIP], n[TV_FAIL]);
		out("    not ok %ld summary\n", ++nr);
		ok = 0;
	}
	report_stderr(err);
	out("%s %d %s\n", ok ? "ok" : "not ok", num, t->name);
	return ok;
}

/*
 * test_progs prints one line per subtest, "#N/M TEST/SUBTEST:RESULT", and then one per test,
 * "#N TEST:RESULT", RESULT being OK, SKIP or FAIL; a failed (sub)test's log comes on the
 * lines before its result. After the last test, if any failed, "All error logs:" and the
 * failed tests' logs and results again, then "Summary: S/SS PASSED, K SKIPPED, F FAILED"
 * (S tests without an error, SS subtests, K skips of tests and subtests, F tests failed).
 */
enum tp_status { TP_NONE = -1, TP_OK, TP_SKIP, TP_FAIL };

/*
 * The result of a test_progs result line @line, or TP_NONE if it is not one. For a result
 * line, the name is moved to the start of @line, its length in bytes goes to *@len, and
 * *@is_test says whether it is a test's line (1) or a subtest's (0).
 */
static int tp_result(char *line, int *len, int *is_test)
{
	const char *s = line + 1, *name, *colon;
	int status;

	if (line[0] != '#' || *s < '0' || *s > '9')
		return TP_NONE;
	s += strspn(s, "0123456789");
	*is_test = *s != '/';
	if (*s == '/')
		s += 1 + strspn(s + 1, "0123456789");
	if (*s != ' ')
		return TP_NONE;
	name = s + strspn(s, " ");
	colon = strrchr(name, ':');
	if (!colon || colon == name)
		return TP_NONE;
	if (!strcmp(colon, ":OK"))
		status = TP_OK;
	else if (!strcmp(colon, ":SKIP"))
		status = TP_SKIP;
	else if (!strcmp(colon, ":FAIL"))
		status = TP_FAIL;
	else
		return TP_NONE;
	*len = colon - name;
	memmove(line, name, *len + strlen(colon) + 1);
	return status;
}

/*
 * Print test_progs' results (@log: its standard output, modified; @err: its standard error,
 * or NULL) as a KTAP subtest: one case per result line, "TEST/SUBTEST" or "TEST" ('#'
 * becomes '_'), each failure after the last 10 log lines printed before it (since the last
 * result line; for a test, since the last test's line, as a test's own log comes before its
 * subtests' results). Results after "All error logs:" are repeats and are not counted. A
 * missing Summary line, or one whose test counts disagree with the result lines, is one more
 * failed case. @ret is test_progs' exit status. Returns 1 if no case failed.
 */
static int report_test_progs(int num, const struct test *t, char *log, const char *err,
			     int ret)
{
	long nlines = 0, i, c, from = 0, from_test = 0, nr = 0, ncases = 0, tests_ok = 0;
	long tests_failed = 0;
	long sp = -1, ssp = -1, sk = -1, sf = -1;
	int ok = 1, summary_ok, status, len, is_test, repeats = 0;
	char **lines, *line, *save, *s;
	signed char *res, *tst;

	for (s = log; *s; s++)
		nlines += *s == '\n';
	lines = calloc(nlines + 2, sizeof(*lines));
	res = calloc(nlines + 2, 1);
	tst = calloc(nlines + 2, 1);
	if (!lines || !res || !tst) {
		free(lines);
		free(res);
		free(tst);
		out("not ok %d %s # out of memory\n", num, t->name);
		return 0;
	}
	nlines = 0;
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		lines[nlines++] = line;

	for (i = 0; i < nlines; i++) {
		res[i] = TP_NONE;
		if (sscanf(lines[i], "Summary: %ld/%ld PASSED, %ld SKIPPED, %ld FAILED",
			   &sp, &ssp, &sk, &sf) == 4)
			continue;
		repeats |= !strcmp(lines[i], "All error logs:");
		if (repeats)
			continue;
		status = tp_result(lines[i], &len, &is_test);
		if (status == TP_NONE)
			continue;
		lines[i][len] = '\0';
		res[i] = status;
		tst[i] = is_test;
		ncases++;
		if (is_test) {
			tests_ok += status != TP_FAIL;
			tests_failed += status == TP_FAIL;
		}
	}
	summary_ok = sp == tests_ok && sf == tests_failed && exit_agrees(ret, sf > 0) &&
		     (ret != 0) == (sf > 0);
	out("    KTAP version 1\n    # Subtest: %s\n    1..%ld\n", t->name, ncases + !summary_ok);
	for (i = 0; i < nlines; i++) {
		if (res[i] == TP_NONE)
			continue;
		for (s = lines[i]; *s; s++)
			if (*s == '#')
				*s = '_';
		if (res[i] == TP_FAIL) {
			long start = tst[i] ? from_test : from, logged = 0;

			/* Its log: the last 10 lines that are not results (a test's own log
			 * comes before its subtests' lines), each cut at 200 bytes.
			 */
			ok = 0;
			for (c = start; c < i; c++)
				logged += res[c] == TP_NONE;
			for (c = start; c < i; c++)
				if (res[c] == TP_NONE && logged-- <= 10)
					out("    # %.200s\n", lines[c]);
		}
		out("    %s %ld %s%s\n", res[i] == TP_FAIL ? "not ok" : "ok", ++nr, lines[i],
		    res[i] == TP_SKIP ? " # SKIP" : "");
		from = i + 1;
		if (tst[i])
			from_test = i + 1;
	}
	if (!summary_ok) {
		out("    # %s exited with %d; Summary %ld/%ld passed, %ld skipped, %ld failed (-1: no Summary); result lines: %ld tests passed or skipped, %ld failed\n",
		    t->name, ret, sp, ssp, sk, sf, tests_ok, tests_failed);
		out("    not ok %ld summary\n", ++nr);
		ok = 0;
	}
	free(lines);
	free(res);
	free(tst);
	report_stderr(err);
	out("%s %d %s\n", ok ? "ok" : "not ok", num, t->name);
	return ok;
}

/* The whole of a (debugfs) file into a buffer the caller frees; NULL if it cannot. */
static char *read_all(const char *path)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

/*
 * Run @path with the words of @args in the directory @dir (NULL: the init's own),
 * collecting its standard output into a buffer (caller frees); its standard error goes to
 * @errfd if that is not -1. *@ret gets its exit status, or -errno if it could not run.
 */
static char *run_program(const char *path, const char *args, const char *dir, int errfd,
			 int *ret)
{
	char *argv[32], *copy = strdup(args), *save, *tok;
	size_t len = 0, cap = 1 << 16;
	char *log = malloc(cap);
	int pfd[2], argc = 0, status;
	pid_t pid;

	if (!log || !copy || pipe(pfd)) {
		free(log);
		free(copy);
		return NULL;
	}
	argv[argc++] = (char *)path;
	for (tok = strtok_r(copy, " \t", &save); tok && argc < 31; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		if (errfd >= 0)
			dup2(errfd, STDERR_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		if (dir && chdir(dir))
			_exit(126);
		execv(path, argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *bigger = realloc(log, cap * 2);

			if (!bigger)
				break;
			log = bigger;
			cap *= 2;
		}
		n = read(pfd[0], log + len, 4096);
		if (n <= 0)
			break;
		len += n;
	}
	log[len] = '\0';
	close(pfd[0]);
	free(copy);
	*ret = -ECHILD;
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		*ret = WIFEXITED(status) ? WEXITSTATUS(status) : KILLED_BY + WTERMSIG(status);
	return log;
}

#define UNPRIV_BPF	"/proc/sys/kernel/unprivileged_bpf_disabled"

/* Write @val to the file @path (a sysctl); 0, or -1 after saying why on the console. */
static int write_sysctl(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ok;

	ok = fd >= 0 && write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	if (!ok)
		out("# cannot write %s to %s: %s\n", val, path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/*
 * Run a BPF selftest runner (@path, @args, in @dir) as run_program() does; its standard
 * error (libbpf's messages, unbuffered, which would land in the middle of its buffered
 * output lines) goes to a file and into *@err (caller frees; NULL if it cannot be read).
 * With @unpriv, for test_verifier's unprivileged runs ("#N/u"), kernel.unprivileged_bpf_disabled
 * must be 0; a kernel built with CONFIG_BPF_UNPRIV_DEFAULT_OFF boots with 2, which root may
 * lower: it is set to 0 for the run and put back afterwards (1 cannot be changed: those runs
 * then SKIP).
 */
static char *run_selftest(const char *path, const char *args, const char *dir, int unpriv,
			  int *ret, char **err)
{
	static const char errpath[] = "/tmp/selftest.stderr";
	char was[8] = "";
	char *log;
	int fd;

	if (unpriv)
		read_file(UNPRIV_BPF, was, sizeof(was));
	if (was[0] == '2' && !write_sysctl(UNPRIV_BPF, "0"))
		out("# %s: 2 -> 0 for the unprivileged runs\n", UNPRIV_BPF);
	fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	log = run_program(path, args, dir, fd, ret);
	if (fd >= 0)
		close(fd);
	*err = read_all(errpath);
	unlink(errpath);
	if (was[0] == '2')
		write_sysctl(UNPRIV_BPF, "2");
	return log;
}

static void run_test(int num, const struct test *t)
{
	int is_tv = !strcmp(t->kind, "test_verifier"), is_tp = !strcmp(t->kind, "test_progs");
	int is_exec = is_tv || is_tp || !strcmp(t->kind, "exec");
	int is_kunit = !strcmp(t->kind, "kunit");
	char path[256];
	struct stat st;
	char *log, *err = NULL;
	int ret;

	if (!strcmp(t->kind, "unlisted")) {
		out("not ok %d %s # harness.only names a test tests.list does not have\n",
		    num, t->name);
		return;
	}
	snprintf(path, sizeof(path), is_exec ? "/bin/%s" :
		 is_kunit ? "/sys/kernel/debug/kunit/%s/results" : "/lib/modules/%s", t->module);
	if (stat(path, &st)) {
		out("ok %d %s # SKIP %s is not built in this tree\n", num, t->name, t->module);
		return;
	}
	out("# %s: %s %s %s\n", t->name, is_exec ? "running" : is_kunit ? "reading" : "loading",
	    is_kunit ? path : t->module, t->args);
	ret = 0;
	if (is_kunit)
		log = read_all(path);
	else if (is_tv || is_tp)
		log = run_selftest(path, t->args, is_tp ? "/lib/bpf" : NULL, is_tv, &ret, &err);
	else
		log = is_exec ? run_program(path, t->args, NULL, -1, &ret) :
				run_module(path, t->args, &ret);
	if (!log) {
		out("not ok %d %s # out of memory\n", num, t->name);
		return;
	}
	if (!strcmp(t->kind, "test_bpf"))
		report_summary(num, t, log, ret, parse_test_bpf);
	else if (!strcmp(t->kind, "test_vmalloc"))
		report_summary(num, t, log, ret, parse_test_vmalloc);
	else if (is_tv)
		report_test_verifier(num, t, log, err, ret);
	else if (is_tp)
		report_test_progs(num, t, log, err, ret);
	else if (!strcmp(t->kind, "ktap") || is_exec || is_kunit)
		report_ktap(num, t, log, ret);
	else
		out("not ok %d %s # unknown kind '%s' in tests.list\n", num, t->name, t->kind);
	free(log);
	free(err);
}

/**
 * watchdog_start - start the watchdog of one test
 * @t: the test about to run
 * @limit: seconds it may take; 0 or less: no watchdog
 *
 * Forks a child that sleeps @limit seconds, then names @t on the console, dumps the blocked
 * tasks through /proc/sysrq-trigger when the kernel has it, and powers the machine off: a
 * test that hangs (in user space or in the kernel) ends the boot at once with its name.
 *
 * Return: the child's pid for watchdog_stop(), or -1 if there is none (@limit <= 0, or fork
 * failed: said on the console).
 */
static pid_t watchdog_start(const struct test *t, int limit)
{
	pid_t pid;
	int fd;

	if (limit <= 0)
		return -1;
	pid = fork();
	if (pid < 0)
		out("# harness: no watchdog for %s: fork: %s\n", t->name, strerror(errno));
	if (pid)
		return pid;
	sleep(limit);
	out("# harness: watchdog: %s still running after %d s (harness.test_timeout); powering off\n",
	    t->name, limit);
	/* sysrq's task dump prints at KERN_INFO, below the guest's loglevel=5. */
	klogctl(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 8);
	fd = open("/proc/sysrq-trigger", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "w", 1) != 1)
			out("# harness: sysrq w: %s\n", strerror(errno));
		close(fd);
	}
	sync();
	reboot(RB_POWER_OFF);
	_exit(1);
}

/* Stop the watchdog @pid of watchdog_start() (nothing for -1) and reap it. */
static void watchdog_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * Kernel log messages that say how the guest booted: the exception level arm64 started at
 * and whether it uses VHE, how many CPUs came up, the preemption model. The console shows
 * only warnings (loglevel=5), so print_boot_facts() repeats them for the host, which shows
 * them in the summary and fails a run whose console lacks one its arch requires
 * (BOOT_LINES, qemu/arch/ARCH.conf; scripts/report.sh).
 */
static const char *const boot_facts[] = {
	"CPU: All CPU(s) started at EL",
	"CPU features: detected: Virtualization Host Extensions",
	"smp: Brought up ",
	"Dynamic Preempt: ",
};

/* Print the kernel log's boot_facts[] messages as "# harness: kernel: MESSAGE" lines. */
static void print_boot_facts(void)
{
	int kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	char *log = kfd < 0 ? NULL : kmsg_collect(kfd), *line, *save;
	size_t i;

	if (!log) {
		out("# harness: cannot read the kernel log: %s\n", strerror(errno));
		if (kfd >= 0)
			close(kfd);
		return;
	}
	close(kfd);
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (i = 0; i < sizeof(boot_facts) / sizeof(boot_facts[0]); i++)
			if (!strncmp(line, boot_facts[i], strlen(boot_facts[i])))
				out("# harness: kernel: %s\n", line);
	free(log);
}

int main(void)
{
	static struct test tests[MAX_TESTS];
	int n, i, limit = DEFAULT_TEST_TIMEOUT;
	char val[32];

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));

	if (cmdline_get("harness.test_timeout", val, sizeof(val))) {
		char *end;

		limit = strtol(val, &end, 10);
		if (end == val || *end || limit < 0) {
			out("# harness: harness.test_timeout=%s is not a number of seconds; using %d\n",
			    val, DEFAULT_TEST_TIMEOUT);
			limit = DEFAULT_TEST_TIMEOUT;
		}
	}
	n = load_tests(tests);
	/* The marker lets the report skip KTAP that built-in KUnit printed during boot. */
	out("# harness: guest init\n");
	print_boot_facts();
	out("KTAP version 1\n1..%d\n", n);
	for (i = 0; i < n; i++) {
		pid_t wd = watchdog_start(&tests[i], limit);

		run_test(i + 1, &tests[i]);
		watchdog_stop(wd);
	}
	out("# harness: done\n");

	sync();
	reboot(RB_POWER_OFF);
	out("# harness: power off failed: %s\n", strerror(errno));
	for (;;)
		pause();
}
