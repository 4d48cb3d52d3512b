// SPDX-License-Identifier: GPL-2.0
/*
 * planted.c - a guest program that fails on purpose, for tests/planted-test.sh
 * (qemu/guest/planted.list, run with harness.list=planted harness.only=NAME):
 *
 *   planted crash  prints two passing results, then dies of SIGSEGV: the guest init must
 *                  fail its exit_status case although every result passed.
 *   planted hang   prints one passing result, then sleeps forever: the guest init's
 *                  watchdog must name the test and end the boot.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	printf("KTAP version 1\n1..2\nok 1 before\n");
	fflush(stdout);
	if (!strcmp(mode, "hang")) {
		for (;;)
			pause();
	}
	printf("ok 2 last\n");
	fflush(stdout);
	if (!strcmp(mode, "crash"))
		raise(SIGSEGV);
	fprintf(stderr, "usage: planted crash|hang\n");
	return 2;
}
