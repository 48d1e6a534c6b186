/* apptype_file(): golang, rust and the .NET apphost from the executable itself (apptype.h). */
#define _GNU_SOURCE /* memmem */
#include "resources/apptype.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "tls/go_binary.h"

/* The one run path Coroot takes for a .NET apphost (containers/dotnet.go). */
#define APPHOST_RUNPATH "$ORIGIN/netcoredeps"

/*
 * Its DT_RPATH entries (Coroot reads DT_RUNPATH only when there are none):
 * true when they, or else the DT_RUNPATH ones, are exactly APPHOST_RUNPATH.
 */
static bool is_apphost(Elf *e, Elf_Scn *dyn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(dyn, NULL);
	int n[2] = { 0, 0 }; /* DT_RPATH, DT_RUNPATH entries */
	bool match[2] = { false, false };

	if (!d || !sh->sh_entsize)
		return false;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Dyn dy;
		if (!gelf_getdyn(d, (int)i, &dy))
			break;
		int k = dy.d_tag == DT_RPATH ? 0 : dy.d_tag == DT_RUNPATH ? 1 : -1;
		if (k < 0)
			continue;
		const char *v = elf_strptr(e, sh->sh_link, dy.d_un.d_val);
		n[k]++;
		match[k] = v && !strcmp(v, APPHOST_RUNPATH);
	}
	int k = n[0] ? 0 : 1;
	return n[k] == 1 && match[k];
}

/*
 * Coroot's file tests, from the section headers: rust when .comment mentions
 * "rustc version", and the .NET apphost's run path (APPTYPE_FILE_APPHOST).
 */
static uint64_t section_bits(int fd)
{
	uint64_t bits = 0;
	size_t shstrndx;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return 0;
	if (elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
			GElf_Shdr sh;
			const char *name;
			if (!gelf_getshdr(s, &sh))
				continue;
			if (sh.sh_type == SHT_DYNAMIC && is_apphost(e, s, &sh))
				bits |= APPTYPE_FILE_APPHOST;
			if (!(name = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(name, ".comment"))
				continue;
			Elf_Data *d = elf_getdata(s, NULL);
			if (d && d->d_buf && memmem(d->d_buf, d->d_size, "rustc version", 13))
				bits |= 1ull << apptype_rust();
		}
	}
	elf_end(e);
	return bits;
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
	uint64_t more = section_bits(fd);
	if (bits) /* Go: never rust (Coroot asks Go first) */
		more &= ~(1ull << apptype_rust());
	return bits | more;
}
