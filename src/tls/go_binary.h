/*
 * Go executables: which Go built them, and where their functions are, even
 * when stripped. The TLS uprobe manager needs both to probe crypto/tls in
 * every Go binary: the version decides the calling convention (register ABI
 * or stack) and struct layouts, and the function table gives the file
 * offsets uprobes attach at.
 *
 * Two things in the file survive `go build -ldflags='-s -w'` (no .symtab, no
 * DWARF) and even a removed section header table:
 *  - the build info blob ("\xff Go buildinf:", section .go.buildinfo, since
 *    Go 1.13), which holds the version string;
 *  - the pclntab (section .gopclntab or .data.rel.ro.gopclntab, found by its
 *    magic when there are no section headers), the runtime's own table of
 *    every function's name and entry PC, in the formats of Go 1.2-1.15,
 *    1.16-1.17, 1.18-1.19 and 1.20+.
 *
 * Plain byte parsing of 32- and 64-bit ELF files of either byte order; no
 * libelf, no BPF, no /proc, no globals beyond a per-thread error message.
 * Every offset, count and length read from the file is checked: a corrupt or
 * truncated file gives -EINVAL (or -ENOEXEC, -ENOENT, -EOPNOTSUPP as
 * documented), never a crash, a read outside the file or a hang.
 */
#ifndef NODESCOPE_TLS_GO_BINARY_H
#define NODESCOPE_TLS_GO_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An opened Go executable: the file's bytes and the tables found in them.
 * Nothing changes after open, so lookups may run in several threads at once.
 */
struct go_binary;

/* Past these counts a table is treated as corrupt (-EINVAL). */
#define GO_BINARY_MAX_FUNCS (1u << 24)
#define GO_BINARY_MAX_PHDRS 4096u

/* The pclntab layouts, named after the first Go release that wrote each. */
enum go_pclntab_format {
	GO_PCLNTAB_NONE = 0,
	GO_PCLNTAB_1_2 = 102,	/* magic 0xfffffffb: Go 1.2-1.15 */
	GO_PCLNTAB_1_16 = 116,	/* 0xfffffffa: Go 1.16-1.17 */
	GO_PCLNTAB_1_18 = 118,	/* 0xfffffff0: Go 1.18-1.19 */
	GO_PCLNTAB_1_20 = 120,	/* 0xfffffff1: Go 1.20 and later */
};

struct go_version {
	int major, minor, patch;	/* 1, 19, 8; patch 0 for "go1.21rc2" and "go1.20" */
	char str[64];			/* as in the binary ("go1.19.8"), cut to fit */
};

struct go_binary_info {
	unsigned int machine;		/* e_machine: EM_X86_64, EM_AARCH64, ... */
	unsigned int ptr_size;		/* 4 or 8 */
	bool big_endian;
	bool has_build_info;		/* false for Go < 1.13: version unknown */
	enum go_pclntab_format pclntab_format;
	bool pclntab_by_section;	/* found as a section, not by scanning segments */
	uint64_t pclntab_addr;		/* virtual address of the pclntab header */
	uint64_t nfunc;			/* functions in the pclntab */
	uint64_t text_start;		/* base of 1.18+ entry offsets (runtime.text), else 0 */
};

/* Where a function is: uprobes take the file offset. */
struct go_func {
	uint64_t addr;		/* entry PC (link-time virtual address) */
	uint64_t size;		/* up to the next function's entry, alignment padding included */
	uint64_t offset;	/* file offset of the entry */
};

/*
 * Opens path read-only and maps it. Returns 0 and *out, or -errno from
 * open/fstat/mmap; -ENOEXEC when the file is not a regular file, not ELF,
 * not an executable or shared object, or not built by Go (no build info and
 * no pclntab); -EINVAL when it is a corrupt or truncated ELF or Go binary
 * (a PT_LOAD past the end of the file, a build info or pclntab whose fields
 * disagree, a function table going backwards, functions outside every
 * executable segment); -EOPNOTSUPP for a pclntab of a format newer than this
 * code knows; -ENOMEM. *out is NULL on failure.
 *
 * The file is mapped, not read: a file truncated by someone else while it is
 * open raises SIGBUS in the caller, as it would with libelf.
 */
int go_binary_open(const char *path, struct go_binary **out);

/* Same from an fd (e.g. opened under /proc/PID/root). The fd is not kept:
 * the caller keeps ownership of it and may close it at once. */
int go_binary_open_fd(int fd, struct go_binary **out);

/* Same from bytes (fuzzing, tests). The bytes are copied. */
int go_binary_open_mem(const void *buf, size_t len, struct go_binary **out);

void go_binary_close(struct go_binary *g); /* NULL is fine */

/*
 * The Go version from the build info. Returns 0; -ENOENT when the binary has
 * no build info (Go < 1.13; *out zeroed); -EINVAL when the version string is
 * not of the form "goMAJOR.MINOR[.PATCH]..." (a "devel go1.22-abc..." string
 * is understood), with out->str filled and the numbers 0.
 */
int go_binary_version(const struct go_binary *g, struct go_version *out);

/*
 * Whether Go functions take their arguments in registers (ABIInternal):
 * amd64 from Go 1.17, arm64 and ppc64 from 1.18, riscv64 from 1.19,
 * loong64 from 1.20. Without a version, the pclntab format gives a lower
 * bound (1.18 or 1.20), else false.
 */
bool go_binary_regabi(const struct go_binary *g);

void go_binary_info(const struct go_binary *g, struct go_binary_info *out);

/*
 * Looks up a function by its full Go name ("crypto/tls.(*Conn).Write",
 * "main.main") in the pclntab. Returns 0 and fills *out; -ENOENT when no
 * function has that name; -EINVAL for an empty name, when the function's
 * code is not inside the file-backed part of an executable PT_LOAD, or when
 * any entry of the table is inconsistent (an entry PC that disagrees with its
 * _func, a name offset out of range): the whole table is then untrusted,
 * since a wrong offset would put a breakpoint in the middle of an instruction.
 */
int go_binary_find_func(const struct go_binary *g, const char *name, struct go_func *out);

/*
 * Looks up n names in one pass over the table. rc[i] gets what
 * go_binary_find_func would have returned for names[i], out[i] its result.
 * Returns the number of names found (0..n).
 */
size_t go_binary_find_many(const struct go_binary *g, const char *const *names, size_t n,
			   struct go_func *out, int *rc);

/* The last failure of a go_binary_* call in this thread ("" if none yet). */
const char *go_binary_last_error(void);

#endif
