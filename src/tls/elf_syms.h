/*
 * ELF function symbols and their file offsets: what the TLS uprobe manager
 * needs to decide whether an executable or shared library holds TLS
 * plaintext entry points (SSL_write, SSL_read, gnutls_record_send, ...) and
 * where to attach (uprobes take a file offset, not a virtual address).
 *
 * Built on libelf (elfutils). Reads only: no BPF, no /proc, no globals
 * beyond a per-thread error message. Every size, count and link read from
 * the file is checked; a corrupt or truncated file gives -EINVAL, never a
 * crash or a hang.
 */
#ifndef NODESCOPE_TLS_ELF_SYMS_H
#define NODESCOPE_TLS_ELF_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An opened ELF file (an ET_EXEC or ET_DYN, 32- or 64-bit, any byte order). */
struct elf_syms;

/* Past these counts a table is treated as corrupt (-EINVAL). */
#define ELF_SYMS_MAX_SYMBOLS (1u << 24)
#define ELF_SYMS_MAX_PHDRS 4096u

struct elf_sym {
	uint64_t addr;		/* st_value: link-time virtual address (ARM Thumb bit cleared) */
	uint64_t size;		/* st_size, 0 when unknown */
	uint64_t offset;	/* file offset of the first instruction: attach here */
	const char *version;	/* "OPENSSL_3.0.0", NULL when unversioned; valid until close */
	bool default_version;	/* true unless a non-default (hidden, "name@VER") version */
	bool dynamic;		/* found in .dynsym (exported), else in .symtab */
	uint8_t binding;	/* STB_GLOBAL, STB_WEAK, STB_LOCAL (hidden symbols of a static link) */
};

/*
 * Opens path read-only (O_NONBLOCK, so a FIFO cannot block the caller).
 * Returns 0 and *out, or -errno from open/fstat, -ENOEXEC when the file is
 * not a regular file, not ELF, or an ELF that is neither an executable nor a
 * shared object (relocatable, core), -EINVAL when it is a corrupt or
 * truncated ELF, -ENOMEM. *out is NULL on failure.
 */
int elf_syms_open(const char *path, struct elf_syms **out);

/* Same from an fd (e.g. opened under /proc/PID/root). The fd is duplicated:
 * the caller keeps ownership of its own and may close it at once. */
int elf_syms_open_fd(int fd, struct elf_syms **out);

/* Same from bytes (fuzzing, tests). The bytes are copied. */
int elf_syms_open_mem(const void *buf, size_t len, struct elf_syms **out);

void elf_syms_close(struct elf_syms *e); /* NULL is fine */

/*
 * Looks up a defined function symbol (STT_FUNC, or STT_GNU_IFUNC: see
 * -EOPNOTSUPP; undefined imports and data never match) in .dynsym and .symtab.
 *
 * name is a bare name ("SSL_write"), which matches every version of it
 * ("SSL_write@@OPENSSL_3.0.0" in .symtab, a .gnu.version-tagged .dynsym
 * entry), or a versioned one: "SSL_write@OPENSSL_1.1.0" matches only that
 * version, "SSL_write@@OPENSSL_3.0.0" only that version as the default.
 *
 * When several symbols match, the best wins: a default or unversioned
 * version over a non-default one, then global over weak over local, then
 * .dynsym over .symtab, then the first in the table.
 *
 * Returns 0 and fills *out; -ENOENT when no symbol matches; -EOPNOTSUPP
 * when the winner is an STT_GNU_IFUNC (its address is the resolver, not the
 * function: glibc's memcpy@@GLIBC_2.14 is one, and must not silently fall
 * back to the plain memcpy@GLIBC_2.2.5); -EINVAL when the winner's address
 * is not inside the file-backed part of an executable PT_LOAD segment, or
 * its offset is past the end of the file; -EINVAL for an empty name.
 */
int elf_syms_find(struct elf_syms *e, const char *name, struct elf_sym *out);

/*
 * Looks up n names in one pass over each table (the manager wants six names
 * per file, and a large binary has millions of symbols). rc[i] gets what
 * elf_syms_find would have returned for names[i], out[i] its symbol.
 * Returns the number of names found (0..n).
 */
size_t elf_syms_find_many(struct elf_syms *e, const char *const *names, size_t n,
			  struct elf_sym *out, int *rc);

/* The file has no .symtab (or an empty one): only exported symbols remain. */
bool elf_syms_stripped(const struct elf_syms *e);

/* ELFCLASS32 or ELFCLASS64, and e_machine (EM_X86_64, EM_AARCH64, ...). */
int elf_syms_class(const struct elf_syms *e);
unsigned int elf_syms_machine(const struct elf_syms *e);

/*
 * Helpers for readers of code and unwind tables (tls/ret_sites): all take
 * link-time virtual addresses and are bounded by the file.
 */

/* Where a virtual address is in the file. */
struct elf_syms_loc {
	uint64_t offset;	/* file offset of addr */
	uint64_t avail;		/* bytes from there to the end of the segment's file part */
	bool exec;		/* the segment is executable */
};

/*
 * Locates addr: it must be inside the file-backed part (p_filesz) of a
 * PT_LOAD segment, and avail is cut to the end of the file. 0, or -EINVAL
 * (with a message) when it is not.
 */
int elf_syms_locate(const struct elf_syms *e, uint64_t addr, struct elf_syms_loc *out);

/*
 * Copies len bytes at file offset off into buf with pread, never through a
 * mapping: a mapping of a file with uprobes attached shows their int3
 * bytes (the kernel installs them in every new mapping that may execute,
 * even one mapped read-only), so code read that way would lose the probed
 * instructions. 0, -EINVAL when the range is not inside the file (or the
 * file shrank), -errno from pread.
 */
int elf_syms_read(struct elf_syms *e, uint64_t off, void *buf, size_t len);

/*
 * The first allocated section named name (".plt", ".eh_frame"): its address
 * and size. -ENOENT when there is none (or no section headers at all), -EINVAL
 * when the section name table is corrupt.
 */
int elf_syms_section(struct elf_syms *e, const char *name, uint64_t *addr, uint64_t *size);

/* The first program header of type p_type (PT_GNU_EH_FRAME): p_vaddr and p_filesz. -ENOENT */
int elf_syms_segment(struct elf_syms *e, uint32_t p_type, uint64_t *addr, uint64_t *size);

/*
 * A defined function symbol with a size whose [addr, addr + size) holds addr
 * (.dynsym first, then .symtab; the first match wins), with its offset.
 * -ENOENT when none does, -EINVAL when it is not in an executable segment.
 */
int elf_syms_func_at(struct elf_syms *e, uint64_t addr, struct elf_sym *out);

/* The last failure of an elf_syms_* call in this thread ("" if none yet). */
const char *elf_syms_last_error(void);

#endif
