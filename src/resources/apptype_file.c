/* apptype_file(): golang and rust from the executable itself (apptype.h). */
#define _GNU_SOURCE /* memmem */
#include "resources/apptype.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "tls/go_binary.h"

/* Coroot's test: the .comment section mentions "rustc version". */
static bool is_rust(int fd)
{
	bool rust = false;
	size_t shstrndx;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return false;
	if (elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
			GElf_Shdr sh;
			const char *name;
			if (!gelf_getshdr(s, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
			    strcmp(name, ".comment"))
				continue;
			Elf_Data *d = elf_getdata(s, NULL);
			rust = d && d->d_buf && memmem(d->d_buf, d->d_size, "rustc version", 13);
			break;
		}
	}
	elf_end(e);
	return rust;
}

uint64_t apptype_file(int fd)
{
	struct go_binary *g;
	struct go_version v;
	uint64_t bits = 0;

	/* Coroot's test: the build info can be read. */
	if (go_binary_open_fd(fd, &g) == 0) {
		if (go_binary_version(g, &v) == 0)
			bits |= 1ull << apptype_golang();
		go_binary_close(g);
	}
	if (!bits && is_rust(fd))
		bits |= 1ull << apptype_rust();
	return bits;
}
