// SPDX-License-Identifier: GPL-2.0
/*
 * kcore_bpf.c - live BPF text read through /proc/kcore, as perf record --kcore, drgn and
 * crash on a live system read it.
 *
 * Cases (KTAP on stdout):
 *   kcore_elf         /proc/kcore is an ELF64 core file whose PT_LOAD segments can be read
 *   jited_text_match  NPROGS socket filters of the fleet's sizes are loaded and run; for each,
 *                     the bytes /proc/kcore gives at its JIT-ed address (jited_ksyms) equal
 *                     its image as BPF_OBJ_GET_INFO_BY_FD copies it (jited_prog_insns)
 *
 * 6.1's read_kcore() reads vmalloc space with vread(), which copies through the direct-map
 * alias of each page: a series that leaves the alias of live text unmapped (arm64 with
 * rodata=full) oopses here instead of failing a comparison.
 */
#include <elf.h>
#include <fcntl.h>
#include "../bpf_raw.h"
#include "../ktap.h"

#define KCORE		"/proc/kcore"
#define NPROGS		20
#define MAX_ADDS	16000
#define MAX_PHDRS	512

static Elf64_Phdr phdrs[MAX_PHDRS];
static int nphdrs;

/* Read the ELF and program headers of @fd into phdrs[]; 0, or -1 with the reason in @why. */
static int read_headers(int fd, char *why, size_t size)
{
	Elf64_Ehdr eh;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh)) {
		snprintf(why, size, "reading the ELF header: %s", strerror(errno));
		return -1;
	}
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_type != ET_CORE || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		snprintf(why, size, "not an ELF64 core file");
		return -1;
	}
	nphdrs = eh.e_phnum < MAX_PHDRS ? eh.e_phnum : MAX_PHDRS;
	if (pread(fd, phdrs, nphdrs * sizeof(Elf64_Phdr), eh.e_phoff) !=
	    (ssize_t)(nphdrs * sizeof(Elf64_Phdr))) {
		snprintf(why, size, "reading %d program headers: %s", nphdrs, strerror(errno));
		return -1;
	}
	return 0;
}

/* The file offset of kernel address @addr for @len bytes in /proc/kcore, or -1 if no
 * PT_LOAD segment holds all of it.
 */
static off_t kcore_offset(uint64_t addr, uint32_t len)
{
	int i;

	for (i = 0; i < nphdrs; i++) {
		const Elf64_Phdr *p = &phdrs[i];

		if (p->p_type == PT_LOAD && addr >= p->p_vaddr &&
		    addr + len <= p->p_vaddr + p->p_filesz)
			return p->p_offset + (addr - p->p_vaddr);
	}
	return -1;
}

/* The JIT-ed address and image of program @fd: 0, or -1 with the reason in @why. */
static int jited_image(int fd, uint64_t *addr, unsigned char *img, uint32_t *len,
		       char *why, size_t size)
{
	struct bpf_prog_info info;
	uint32_t flen = 0;

	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uintptr_t)addr;
	info.nr_jited_func_lens = 1;
	info.jited_func_lens = (uintptr_t)&flen;
	info.jited_prog_len = *len;
	info.jited_prog_insns = (uintptr_t)img;
	if (prog_info_by_fd(fd, &info)) {
		snprintf(why, size, "BPF_OBJ_GET_INFO_BY_FD: %s", strerror(errno));
		return -1;
	}
	if (!*addr || !info.jited_prog_len || info.jited_prog_len > *len) {
		snprintf(why, size, "no JIT-ed image (address %#llx, %u bytes)",
			 (unsigned long long)*addr, info.jited_prog_len);
		return -1;
	}
	*len = info.jited_prog_len;
	return 0;
}

int main(void)
{
	static unsigned char img[MAX_ADDS * 16], core[MAX_ADDS * 16];
	char why[256] = "";
	int kfd, i, ok = 1, checked = 0;

	printf("KTAP version 1\n1..2\n");
	fflush(stdout);
	kfd = open(KCORE, O_RDONLY);
	if (kfd < 0) {
		result(0, "kcore_elf", "open %s: %s", KCORE, strerror(errno));
		result(0, "jited_text_match", "as kcore_elf");
		return 1;
	}
	result(!read_headers(kfd, why, sizeof(why)), "kcore_elf", why[0] ? "%s" : NULL, why);
	if (failures) {
		result(0, "jited_text_match", "as kcore_elf");
		return 1;
	}
	for (i = 0; i < NPROGS && ok; i++) {
		int adds = fleet_adds(i, MAX_ADDS), fd = load_sized_filter(i, adds);
		uint32_t len = sizeof(img), ret = 0;
		uint64_t addr = 0;
		off_t off;

		if (fd < 0) {
			snprintf(why, sizeof(why), "program %d (%d instructions): load: %s", i,
				 adds + 2, strerror(-fd));
			ok = 0;
			break;
		}
		if (pkt_test_run(fd, 1, &ret, NULL) || ret != (uint32_t)(i + adds)) {
			snprintf(why, sizeof(why), "program %d returned %u, not %d", i, ret, i + adds);
			ok = 0;
		} else if (jited_image(fd, &addr, img, &len, why, sizeof(why))) {
			ok = 0;
		} else if ((off = kcore_offset(addr, len)) < 0) {
			snprintf(why, sizeof(why), "program %d at %#llx (%u bytes): in no PT_LOAD segment",
				 i, (unsigned long long)addr, len);
			ok = 0;
		} else if (pread(kfd, core, len, off) != (ssize_t)len) {
			snprintf(why, sizeof(why), "program %d: pread of %u bytes at %#llx: %s", i, len,
				 (unsigned long long)addr, strerror(errno));
			ok = 0;
		} else if (memcmp(core, img, len)) {
			uint32_t b = 0;

			while (b < len && core[b] == img[b])
				b++;
			snprintf(why, sizeof(why),
				 "program %d at %#llx (%u bytes): kcore differs at byte %u (%02x, image %02x)",
				 i, (unsigned long long)addr, len, b, core[b], img[b]);
			ok = 0;
		} else {
			checked++;
		}
		close(fd);
	}
	if (ok)
		snprintf(why, sizeof(why), "%d programs' images read back through %s", checked, KCORE);
	result(ok, "jited_text_match", "%s", why);
	close(kfd);
	return failures ? 1 : 0;
}
