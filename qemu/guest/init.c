// SPDX-License-Identifier: GPL-2.0
/*
 * init.c - PID 1 of the harness guest.
 *
 * Mounts proc, sysfs, devtmpfs and debugfs, runs the tests listed in /etc/tests.list one
 * after another, prints what each produced on the console and powers the machine off. The
 * host turns that into KTAP (scripts/raw2ktap.c, which says how each KIND is judged), so a
 * saved console can be judged again without a boot.
 *
 * Each line of /etc/tests.list is
 *
 *	NAME KIND MODULE [MODULE ARGUMENTS...]
 *
 * NAME is the KTAP test name; KIND says what MODULE is and how it runs:
 *
 *	test_bpf, test_vmalloc, ktap
 *			MODULE is a file in /lib/modules, loaded with finit_module(2); its
 *			output is the kernel log it printed while loading.
 *	exec		MODULE is a program in /bin (qemu/guest/tests/MODULE.c) that prints
 *			KTAP on its standard output. Arguments are passed on.
 *	test_verifier	MODULE is the BPF selftest runner test_verifier in /bin (built from
 *			the tree by scripts/build-selftests.sh); its standard error is kept
 *			apart from its standard output.
 *	test_progs	MODULE is the BPF selftest runner test_progs in /bin, built from the
 *			suites of qemu/test_progs.allow only, run in /lib/bpf (the BPF objects
 *			it opens by name); standard error as test_verifier's.
 *	kunit		MODULE is a built-in KUnit suite, run at boot; its output is its
 *			results file /sys/kernel/debug/kunit/MODULE/results
 *			(CONFIG_KUNIT_DEBUGFS). No arguments.
 *
 * A test's output is printed between two markers, each of its lines after "|o " (standard
 * output, kernel log, results file) or "|e " (a runner's standard error), as it comes for a
 * program (a crash shows how far it got) and after the load for a module:
 *
 *	# harness: raw begin NUM NAME KIND
 *	# harness: raw end NUM NAME STATUS elapsed=SECONDS bpf_jit_enable=V
 *
 * STATUS is exit=N, signal=N (killed by signal N) or errno=N (did not load or run: error N);
 * bpf_jit_enable is read when the test has ended (test_bpf's cases are judged by it).
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
 * Keep the console quiet (loglevel=5) so that only warnings and worse interleave with the
 * tests' output.
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
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS	64
#define SYSLOG_ACTION_CONSOLE_LEVEL	8	/* klogctl(2); glibc has no name for it */
#define KILLED_BY	256	/* run_program()'s status of a program killed by signal N: 256 + N */
#define DEFAULT_TEST_TIMEOUT	600	/* seconds; test_bpf, the longest, takes 150 under TCG */
#define LINE_MAX_LEN	1024
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct test {
	char *name;
	char *kind;
	char *module;
	char args[LINE_MAX_LEN];
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

/* Print @len bytes at @s as one raw line of stream @tag, 'o' or 'e': "|o LINE". */
static void raw_line(char tag, const char *s, size_t len)
{
	char pre[3] = { '|', tag, ' ' };
	struct iovec iov[3] = {
		{ pre, sizeof(pre) }, { (void *)s, len }, { "\n", 1 },
	};

	if (writev(STDOUT_FILENO, iov, 3) < 0)
		return;
}

/* Print each line of @buf (NULL: none) with raw_line(), a last one without newline too. */
static void raw_lines(char tag, const char *buf)
{
	while (buf && *buf) {
		size_t len = strcspn(buf, "\n");

		raw_line(tag, buf, len);
		buf += len + (buf[len] == '\n');
	}
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
 * Run @path with the words of @args in the directory @dir (NULL: the init's own), printing
 * each line of its standard output as it comes as a raw line ("|o ", raw_line()); its
 * standard error goes to @errfd if that is not -1.
 *
 * Return: its exit status, KILLED_BY + the signal that killed it, or -errno if it could not
 * be started.
 */
static int run_program(const char *path, const char *args, const char *dir, int errfd)
{
	char *argv[32], *copy = strdup(args), *save, *tok, *nl;
	static char buf[1 << 16];
	size_t len = 0, start;
	int pfd[2], argc = 0, status, ret;
	pid_t pid;

	if (!copy || pipe(pfd)) {
		ret = -errno;
		free(copy);
		return ret;
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
	ret = pid < 0 ? -errno : -ECHILD;
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], buf + len, sizeof(buf) - len);

		if (n <= 0)
			break;
		len += n;
		for (start = 0; (nl = memchr(buf + start, '\n', len - start)); start = nl - buf + 1)
			raw_line('o', buf + start, nl - buf - start);
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len == sizeof(buf)) {
			/* A line longer than the buffer comes out in pieces. */
			raw_line('o', buf, len);
			len = 0;
		}
	}
	if (len)
		raw_line('o', buf, len);
	close(pfd[0]);
	free(copy);
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : KILLED_BY + WTERMSIG(status);
	return ret;
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
 * output lines) goes to a file, printed as raw lines "|e " after the runner ended.
 * With @unpriv, for test_verifier's unprivileged runs ("#N/u"), kernel.unprivileged_bpf_disabled
 * must be 0; a kernel built with CONFIG_BPF_UNPRIV_DEFAULT_OFF boots with 2, which root may
 * lower: it is set to 0 for the run and put back afterwards (1 cannot be changed: those runs
 * then SKIP).
 */
static int run_selftest(const char *path, const char *args, const char *dir, int unpriv)
{
	static const char errpath[] = "/tmp/selftest.stderr";
	char was[8] = "";
	char *err;
	int fd, ret;

	if (unpriv)
		read_file(UNPRIV_BPF, was, sizeof(was));
	if (was[0] == '2' && !write_sysctl(UNPRIV_BPF, "0"))
		out("# %s: 2 -> 0 for the unprivileged runs\n", UNPRIV_BPF);
	fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ret = run_program(path, args, dir, fd);
	if (fd >= 0)
		close(fd);
	err = read_all(errpath);
	raw_lines('e', err);
	free(err);
	unlink(errpath);
	if (was[0] == '2')
		write_sysctl(UNPRIV_BPF, "2");
	return ret;
}

/* The STATUS word of a raw end marker for a status of run_program() or a module's load. */
static void status_word(int ret, char *buf, size_t size)
{
	if (ret >= KILLED_BY)
		snprintf(buf, size, "signal=%d", ret - KILLED_BY);
	else if (ret < 0)
		snprintf(buf, size, "errno=%d", -ret);
	else
		snprintf(buf, size, "exit=%d", ret);
}

/* Run test number @num, @t, printing its output between its raw markers. */
static void run_test(int num, const struct test *t)
{
	static const char *const kinds[] = {
		"test_bpf", "test_vmalloc", "ktap", "exec", "test_verifier", "test_progs", "kunit",
	};
	int is_tv = !strcmp(t->kind, "test_verifier"), is_tp = !strcmp(t->kind, "test_progs");
	int is_exec = is_tv || is_tp || !strcmp(t->kind, "exec");
	int is_kunit = !strcmp(t->kind, "kunit");
	char path[256], status[32], jit[8] = "";
	struct timespec t0, t1;
	struct stat st;
	size_t i;
	char *log;
	int ret;

	if (!strcmp(t->kind, "unlisted")) {
		out("not ok %d %s # harness.only names a test tests.list does not have\n",
		    num, t->name);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(t->kind, kinds[i]))
			break;
	if (i == ARRAY_SIZE(kinds)) {
		out("not ok %d %s # unknown kind '%s' in tests.list\n", num, t->name, t->kind);
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
	out("# harness: raw begin %d %s %s\n", num, t->name, t->kind);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (is_tv || is_tp) {
		ret = run_selftest(path, t->args, is_tp ? "/lib/bpf" : NULL, is_tv);
	} else if (is_exec) {
		ret = run_program(path, t->args, NULL, -1);
	} else {
		log = is_kunit ? read_all(path) : run_module(path, t->args, &ret);
		if (is_kunit)
			ret = log ? 0 : -EIO;
		raw_lines('o', log);
		free(log);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	read_file("/proc/sys/net/core/bpf_jit_enable", jit, sizeof(jit));
	jit[strcspn(jit, "\n")] = '\0';
	status_word(ret, status, sizeof(status));
	out("# harness: raw end %d %s %s elapsed=%.3f bpf_jit_enable=%s\n", num, t->name,
	    status, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	    jit[0] ? jit : "-");
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
		for (i = 0; i < ARRAY_SIZE(boot_facts); i++)
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
