// SPDX-License-Identifier: GPL-2.0
/*
 * raw2ktap.c - turn the raw test output on a harness guest's console into KTAP.
 *
 * Usage: raw2ktap [CONSOLE_LOG]	(standard input without one)
 *
 * The guest init (qemu/guest/init.c) runs each test and prints what it produced between two
 * marker lines, one line of output per "|o " or "|e " line:
 *
 *	# harness: raw begin NUM NAME KIND
 *	|o LINE		the program's standard output, the kernel log a module printed
 *			while loading, or a KUnit suite's results file
 *	|e LINE		a BPF selftest runner's standard error
 *	# harness: raw end NUM NAME STATUS elapsed=SECONDS bpf_jit_enable=V
 *
 * STATUS is exit=N (the program's exit status; a module's load: exit=0), signal=N (killed by
 * signal N) or errno=N (the module did not load, or the program did not run: error N).
 * raw2ktap copies the console to its standard output with each such block replaced by the
 * test's KTAP subtest and its "ok NUM NAME" or "not ok NUM NAME" line, converted as KIND
 * says:
 *
 *	test_bpf	"[CASE: ]Summary: P PASSED, F FAILED[, [J/R JIT'ed]]" lines, one case
 *			each (CASE "tests" when absent); a case fails if F > 0 or fewer than
 *			R of R tests were JIT-ed (with bpf_jit_enable=0: if any was, as the
 *			interpreter is then what must run them).
 *	test_vmalloc	"Summary: CASE passed: P failed: F ..." lines, one case per CASE,
 *			summed over the worker threads; a case fails if F > 0.
 *	ktap, exec, kunit
 *			the test printed KTAP itself; its lines are nested as they are, and a
 *			status that its results do not explain (exit_agrees()) is one more
 *			failed case, exit_status.
 *	test_verifier	each "#N/p" and "#N/u" block of the runner's output is one case
 *			(report_test_verifier()).
 *	test_progs	each result line of the runner's output is one case
 *			(report_test_progs()).
 *
 * Every other line is copied unchanged (a kernel message printed while a test ran comes out
 * before that test's results), without its carriage return. A block that the console ends
 * in (the guest crashed, hung or was stopped) is converted from the lines it has and fails.
 * The console of a guest init that converted in the guest has no markers and is copied as
 * it is, so an old console is judged as it was.
 *
 * Exit status: 0, or 2 if the log cannot be read or memory runs out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KILLED_BY	256	/* a status of a program killed by signal N: 256 + N */
#define INCOMPLETE	(-100000)	/* the status of a block the console ends in */
#define MAX_CASES	256
#define MAX_DIAG	40

struct test {
	char name[128];
	char kind[32];
	int jit_on;	/* net.core.bpf_jit_enable was not 0 when the test ended */
};

struct kcase {
	char name[96];
	long passed;
	long failed;
	long jited;
	long run;
	int has_jit;
};

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/*
 * status_str - how a test ended, in words
 * @ret: its status (see exit_agrees())
 *
 * Return: a static buffer, overwritten by the next call.
 */
static const char *status_str(int ret)
{
	static char buf[160];

	if (ret == INCOMPLETE)
		return "the console ends before its end marker (the guest crashed, hung or stopped)";
	if (ret >= KILLED_BY)
		snprintf(buf, sizeof(buf), "killed by signal %d (%s)", ret - KILLED_BY,
			 strsignal(ret - KILLED_BY));
	else if (ret >= 0)
		snprintf(buf, sizeof(buf), "exited with status %d", ret);
	else
		snprintf(buf, sizeof(buf), "error %d (%s)", ret, strerror(-ret));
	return buf;
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
	char *copy = strdup(log), *line, *save;
	int ncases = 0, ok = 1, diag = 0, i, jit_on = t->jit_on;

	if (!copy)
		return 0;
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
		out("# %s: no Summary line in the log; %s\n", t->name, status_str(ret));
		ok = 0;
	} else if (ret == INCOMPLETE) {
		/* A module's load result says nothing: test_vmalloc always returns -EAGAIN. */
		out("# %s: %s\n", t->name, status_str(ret));
		ok = 0;
	}
	if (!ok) {
		/* Show the module's own failure lines. */
		copy = strdup(log);
		for (line = strtok_r(copy, "\n", &save); copy && line && diag < MAX_DIAG;
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
 * @ret: the test's status from its end marker: a program's exit status, KILLED_BY + the
 *       signal that killed it, a module's load result (0 or -errno); or INCOMPLETE
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
	return ret != INCOMPLETE && (ret == 0 || (ret < KILLED_BY && failed));
}

/* Say how @t ended with @ret, for a result that exit_agrees() refused. */
static void exit_diag(const struct test *t, int ret)
{
	if (ret > 0 && ret < KILLED_BY)
		out("    # %s: exited with status %d although no result failed\n", t->name, ret);
	else
		out("    # %s: %s\n", t->name, status_str(ret));
}

/*
 * ktap: nest the module's or program's own KTAP output, its top-level results numbered
 * 1, 2, ... in their order; passes if every one is "ok" and its exit status agrees
 * (exit_agrees()); otherwise one more case, exit_status, fails, and the nested plan counts it.
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
		if (!strncmp(line, "not ok ", 7) || !strncmp(line, "ok ", 3)) {
			int not = line[0] == 'n', skip = 0;

			/*
			 * Numbered from 1: KUnit (6.1) numbers the suites of a
			 * module after the built-in ones and prints no plan.
			 */
			sscanf(line + (not ? 7 : 3), "%*d%n", &skip);
			out("    %sok %d%s\n", not ? "not " : "", ++results,
			    line + (not ? 7 : 3) + skip);
			ok &= !not;
			continue;
		}
		out("    %s\n", line);
	}
	free(copy);
	if (bad_exit) {
		exit_diag(t, ret);
		out("    not ok %d exit_status\n", results + 1);
		ok = 0;
	}
	if (!results) {
		out("# %s: no KTAP results in its output; %s\n", t->name, status_str(ret));
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
		out("    # %s: %s; passed/skipped/failed: Summary %ld/%ld/%ld (-1: no Summary), blocks %ld/%ld/%ld\n",
		    t->name, status_str(ret), sp, ss, sf, n[TV_PASS], n[TV_SKIP], n[TV_FAIL]);
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
		out("    # %s: %s; Summary %ld/%ld passed, %ld skipped, %ld failed (-1: no Summary); result lines: %ld tests passed or skipped, %ld failed\n",
		    t->name, status_str(ret), sp, ssp, sk, sf, tests_ok, tests_failed);
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

/* A growing NUL-terminated buffer of the lines of one stream of a block. */
struct text {
	char *s;
	size_t len, cap;
};

/* Append @line and a newline to @t; 0, or -1 without memory. */
static int text_add(struct text *t, const char *line)
{
	size_t n = strlen(line);

	if (t->len + n + 2 > t->cap) {
		size_t cap = (t->cap ? t->cap * 2 : 1 << 16) + n;
		char *s = realloc(t->s, cap);

		if (!s)
			return -1;
		t->s = s;
		t->cap = cap;
	}
	memcpy(t->s + t->len, line, n);
	t->len += n;
	t->s[t->len++] = '\n';
	t->s[t->len] = '\0';
	return 0;
}

/* One test's raw block: what its begin marker said and the lines of its streams. */
struct block {
	int num;
	struct test t;
	struct text out, err;
};

/* Parse a begin marker @line into @b; 1 if it is one. */
static int block_begin(const char *line, struct block *b)
{
	memset(b, 0, sizeof(*b));
	b->t.jit_on = 1;
	return sscanf(line, "# harness: raw begin %d %127s %31s", &b->num, b->t.name,
		      b->t.kind) == 3;
}

/*
 * Parse the end marker @line of the block @b: 1 if it is @b's, with its status in *@ret
 * and bpf_jit_enable in @b; the elapsed time is printed as a diagnostic line.
 */
static int block_end(const char *line, struct block *b, int *ret)
{
	char name[128], *copy, *tok, *save;
	int num, off = 0, found = 0;

	if (sscanf(line, "# harness: raw end %d %127s %n", &num, name, &off) < 2 || !off ||
	    num != b->num || strcmp(name, b->t.name))
		return 0;
	copy = strdup(line + off);
	if (!copy)
		return 0;
	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int v;

		if (sscanf(tok, "exit=%d", &v) == 1) {
			*ret = v;
			found = 1;
		} else if (sscanf(tok, "signal=%d", &v) == 1) {
			*ret = KILLED_BY + v;
			found = 1;
		} else if (sscanf(tok, "errno=%d", &v) == 1) {
			*ret = -v;
			found = 1;
		} else if (sscanf(tok, "bpf_jit_enable=%d", &v) == 1) {
			b->t.jit_on = v != 0;
		} else if (!strncmp(tok, "elapsed=", 8)) {
			out("# %s: ran %s s\n", b->t.name, tok + 8);
		}
	}
	free(copy);
	return found;
}

/* Print @b, which ended with @ret, as KTAP as its kind says; free its streams. */
static void block_report(struct block *b, int ret)
{
	const struct test *t = &b->t;
	char *log = b->out.s ? b->out.s : "", *err = b->err.s ? b->err.s : "";

	if (!strcmp(t->kind, "test_bpf"))
		report_summary(b->num, t, log, ret, parse_test_bpf);
	else if (!strcmp(t->kind, "test_vmalloc"))
		report_summary(b->num, t, log, ret, parse_test_vmalloc);
	else if (!strcmp(t->kind, "test_verifier"))
		report_test_verifier(b->num, t, log, err, ret);
	else if (!strcmp(t->kind, "test_progs"))
		report_test_progs(b->num, t, log, err, ret);
	else if (!strcmp(t->kind, "ktap") || !strcmp(t->kind, "exec") ||
		 !strcmp(t->kind, "kunit"))
		report_ktap(b->num, t, log, ret);
	else
		out("not ok %d %s # unknown kind '%s'\n", b->num, t->name, t->kind);
	free(b->out.s);
	free(b->err.s);
	b->out.s = NULL;
	b->err.s = NULL;
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
	static struct block b;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int in = 0, ret;

	if (argc > 2 || (argc == 2 && !strcmp(argv[1], "-h"))) {
		fprintf(stderr, "usage: %s [CONSOLE_LOG]\n", argv[0]);
		return 2;
	}
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1], strerror(errno));
		return 2;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (in && line[0] == '|' && (line[1] == 'o' || line[1] == 'e') &&
		    (line[2] == ' ' || !line[2])) {
			if (text_add(line[1] == 'o' ? &b.out : &b.err, line + 2 + !!line[2])) {
				fprintf(stderr, "%s: out of memory\n", argv[0]);
				return 2;
			}
			continue;
		}
		if (in && block_end(line, &b, &ret)) {
			block_report(&b, ret);
			in = 0;
			continue;
		}
		if (!strncmp(line, "# harness: raw begin ", 21)) {
			if (in)
				block_report(&b, INCOMPLETE);
			in = block_begin(line, &b);
			if (in)
				continue;
		}
		out("%s\n", line);
	}
	if (in)
		block_report(&b, INCOMPLETE);
	free(line);
	if (ferror(f)) {
		fprintf(stderr, "%s: cannot read the log\n", argv[0]);
		return 2;
	}
	return 0;
}
