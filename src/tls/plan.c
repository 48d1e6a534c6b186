#include "plan.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdbool.h>

#include "elf_syms.h"
#include "go_binary.h"
#include "ret_sites.h"

struct tls_fn_name {
	const char *name;
	uint32_t fn;
	const char *library;
	const char *instead_of; /* probing this one covers that one too, which is skipped */
};

static const struct tls_fn_name tls_fns[] = {
	{ "SSL_write", NS_TLS_SSL_WRITE, "openssl" },
	{ "SSL_read", NS_TLS_SSL_READ, "openssl" },
	{ "SSL_write_ex", NS_TLS_SSL_WRITE_EX, "openssl" },
	{ "SSL_read_ex", NS_TLS_SSL_READ_EX, "openssl" },
	/* GnuTLS >= 3.6.3: gnutls_record_send is a tail call (through the PLT) to this. */
	{ "gnutls_record_send2", NS_TLS_GNUTLS_SEND, "gnutls", "gnutls_record_send" },
	{ "gnutls_record_send", NS_TLS_GNUTLS_SEND, "gnutls" },
	{ "gnutls_record_recv", NS_TLS_GNUTLS_RECV, "gnutls" },
};
#define TLS_N_FNS (sizeof(tls_fns) / sizeof(tls_fns[0]))

static void plan_skip(struct tls_plan *plan, const char *name, const char *why)
{
	plan->skipped++;
	if (!plan->error[0])
		snprintf(plan->error, sizeof(plan->error), "%s: %s", name, why);
}

/* Adds fn's entry and return sites, all or nothing. */
static void plan_sites(struct elf_syms *e, struct tls_plan *plan, const char *name,
		       const struct elf_sym *sym, struct tls_probe_site entry,
		       struct tls_probe_site ret)
{
	struct ret_sites rs;
	int err = ret_sites_find(e, sym, &rs);

	if (err) {
		plan_skip(plan, name, ret_sites_last_error());
		return;
	}
	if (!rs.n) {
		plan_skip(plan, name, "no return instruction found");
		return;
	}
	if (plan->n + 1 + rs.n > TLS_PLAN_MAX) {
		plan_skip(plan, name, "too many return sites");
		return;
	}
	/* Returns first: an entry whose returns are not yet probed would leave its call open. */
	for (size_t i = 0; i < rs.n; i++) {
		ret.offset = rs.offsets[i];
		plan->sites[plan->n++] = ret;
	}
	entry.offset = sym->offset;
	plan->sites[plan->n++] = entry;
	plan->functions++;
}

static void plan_function(struct elf_syms *e, struct tls_plan *plan, const struct tls_fn_name *f,
			  const struct elf_sym *sym)
{
	unsigned before = plan->functions;
	plan_sites(e, plan, f->name, sym,
		   (struct tls_probe_site){ .prog = TLS_PROG_ENTRY, .cookie = f->fn },
		   (struct tls_probe_site){ .prog = TLS_PROG_RET, .cookie = NS_TLS_RET });
	if (plan->functions != before)
		plan->library = f->library;
}

static const struct {
	const char *name;
	uint32_t fn;
} go_fns[] = {
	{ "crypto/tls.(*Conn).Write", NS_TLS_GO_WRITE },
	{ "crypto/tls.(*Conn).Read", NS_TLS_GO_READ },
};
#define GO_N_FNS (sizeof(go_fns) / sizeof(go_fns[0]))

/* A Go program: crypto/tls through the pclntab, which stripping keeps. */
static void plan_go(int fd, struct elf_syms *e, struct tls_plan *plan)
{
	const char *names[GO_N_FNS];
	struct go_func funcs[GO_N_FNS];
	struct go_version v;
	struct go_binary *g;
	int rc[GO_N_FNS];

	if (go_binary_open_fd(fd, &g))
		return; /* not Go (or not readable as Go): nothing to probe */
	if (go_binary_version(g, &v) == 0)
		snprintf(plan->go_version, sizeof(plan->go_version), "%s", v.str);
	uint32_t abi = go_binary_regabi(g) ? 0 : NS_TLS_COOKIE_GO_STACK_ABI;
	for (size_t i = 0; i < GO_N_FNS; i++)
		names[i] = go_fns[i].name;
	go_binary_find_many(g, names, GO_N_FNS, funcs, rc);
	for (size_t i = 0; i < GO_N_FNS; i++) {
		if (rc[i]) {
			if (rc[i] != -ENOENT)
				plan_skip(plan, names[i], go_binary_last_error());
			continue;
		}
		uint32_t cookie = go_fns[i].fn | abi;
		if (go_fns[i].fn == NS_TLS_GO_WRITE) {
			/* Sent at its entry, where the bytes are: one probe, needed first. */
			if (plan->n == TLS_PLAN_MAX)
				continue;
			plan->sites[plan->n++] = (struct tls_probe_site){
				.offset = funcs[i].offset, .prog = TLS_PROG_GO_ENTRY, .cookie = cookie
			};
			plan->functions++;
			continue;
		}
		struct elf_sym sym = { .addr = funcs[i].addr, .size = funcs[i].size,
				       .offset = funcs[i].offset };
		plan_sites(e, plan, names[i], &sym,
			   (struct tls_probe_site){ .prog = TLS_PROG_GO_ENTRY, .cookie = cookie },
			   (struct tls_probe_site){ .prog = TLS_PROG_GO_RET,
						    .cookie = cookie | NS_TLS_COOKIE_RET });
	}
	if (plan->functions)
		plan->library = "go";
	go_binary_close(g);
}

int tls_plan_fd(int fd, struct tls_plan *plan)
{
	const char *names[TLS_N_FNS];
	struct elf_sym syms[TLS_N_FNS];
	int rc[TLS_N_FNS];
	struct elf_syms *e;

	memset(plan, 0, offsetof(struct tls_plan, sites));
	plan->error[0] = 0;
	plan->go_version[0] = 0;
	int err = elf_syms_open_fd(fd, &e);
	if (err)
		return err;
	for (size_t i = 0; i < TLS_N_FNS; i++)
		names[i] = tls_fns[i].name;
	if (elf_syms_find_many(e, names, TLS_N_FNS, syms, rc)) {
		for (size_t i = 0; i < TLS_N_FNS; i++) {
			if (rc[i] == 0 && tls_fns[i].instead_of)
				for (size_t j = 0; j < TLS_N_FNS; j++)
					if (!strcmp(tls_fns[j].name, tls_fns[i].instead_of))
						rc[j] = -ENOENT;
		}
		for (size_t i = 0; i < TLS_N_FNS; i++) {
			if (rc[i] == 0)
				plan_function(e, plan, &tls_fns[i], &syms[i]);
			else if (rc[i] != -ENOENT)
				plan_skip(plan, tls_fns[i].name, strerror(-rc[i]));
		}
	}
	if (!plan->functions && !plan->skipped)
		plan_go(fd, e, plan);
	elf_syms_close(e);
	return 0;
}

static bool pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Finds a GNU or Go build id note in a PT_NOTE segment's bytes. */
static bool note_build_id(const uint8_t *p, size_t len, struct tls_plan_key *key)
{
	size_t off = 0;
	while (off + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		memcpy(&nh, p + off, sizeof(nh));
		size_t name = off + sizeof(nh), namesz = (nh.n_namesz + 3u) & ~3u;
		size_t desc = name + namesz, descsz = (nh.n_descsz + 3u) & ~3u;
		if (nh.n_namesz > len || nh.n_descsz > len || desc > len || descsz > len - desc)
			return false;
		bool gnu = nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(p + name, "GNU", 4);
		/* Go writes its owner as "Go\0\0" (namesz 4). */
		bool go = nh.n_type == 4 && (nh.n_namesz == 3 || nh.n_namesz == 4) &&
			  !memcmp(p + name, "Go", 3);
		if ((gnu || go) && nh.n_descsz && nh.n_descsz <= sizeof(key->id)) {
			memcpy(key->id, p + desc, nh.n_descsz);
			key->id_len = nh.n_descsz;
			return true;
		}
		off = desc + descsz;
	}
	return false;
}

int tls_plan_key_fd(int fd, struct tls_plan_key *key)
{
	Elf64_Ehdr eh;
	struct stat st;
	uint8_t notes[4096];

	memset(key, 0, sizeof(*key));
	if (fstat(fd, &st) < 0)
		return -errno;
	key->size = (uint64_t)st.st_size;
	if (!pread_full(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64)
		return -ENOEXEC;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (!pread_full(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			return -ENOEXEC;
		if (ph.p_type != PT_NOTE || !ph.p_filesz)
			continue;
		size_t n = ph.p_filesz < sizeof(notes) ? ph.p_filesz : sizeof(notes);
		if (pread_full(fd, notes, n, ph.p_offset) && note_build_id(notes, n, key))
			return 0;
	}
	return 0;
}
