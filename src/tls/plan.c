#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf_syms.h"
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
static void plan_function(struct elf_syms *e, struct tls_plan *plan, const struct tls_fn_name *f,
			  const struct elf_sym *sym)
{
	struct ret_sites rs;
	int err = ret_sites_find(e, sym, &rs);

	if (err) {
		plan_skip(plan, f->name, ret_sites_last_error());
		return;
	}
	if (!rs.n) {
		plan_skip(plan, f->name, "no return instruction found");
		return;
	}
	if (plan->n + 1 + rs.n > TLS_PLAN_MAX) {
		plan_skip(plan, f->name, "too many return sites");
		return;
	}
	plan->sites[plan->n++] = (struct tls_probe_site){ sym->offset, f->fn };
	for (size_t i = 0; i < rs.n; i++)
		plan->sites[plan->n++] = (struct tls_probe_site){ rs.offsets[i], NS_TLS_RET };
	plan->functions++;
	plan->library = f->library;
}

int tls_plan_fd(int fd, struct tls_plan *plan)
{
	const char *names[TLS_N_FNS];
	struct elf_sym syms[TLS_N_FNS];
	int rc[TLS_N_FNS];
	struct elf_syms *e;

	memset(plan, 0, offsetof(struct tls_plan, sites));
	plan->error[0] = 0;
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
	elf_syms_close(e);
	return 0;
}
