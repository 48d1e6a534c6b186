/*
 * container_application_type: what a process is, by Coroot's rules
 * (apptype/apptype.go): its command line (argv[0]'s first word, ':' cut, by
 * suffix, and a few Java main classes anywhere in it), else its executable's
 * path (php, python, nodejs, ruby); plus golang (the executable has Go build
 * info) and rust (its .comment names rustc), from the file (apptype_file.c).
 * Types are bits of a uint64_t, named by apptype_name(). Pure.
 */
#ifndef NODESCOPE_RESOURCES_APPTYPE_H
#define NODESCOPE_RESOURCES_APPTYPE_H

#include <stddef.h>
#include <stdint.h>

/* The bit of a type; -1 for none. cmdline is /proc/PID/cmdline: NUL-separated, len bytes. */
int apptype_by_cmdline(const char *cmdline, size_t len);
int apptype_by_exe(const char *exe);

/* The bits golang and rust. */
int apptype_golang(void);
int apptype_rust(void);

/* The label value of bit i (NULL past the last). */
const char *apptype_name(int bit);
#define APPTYPE_MAX 64

/* Of the executable file fd: apptype_golang()'s and apptype_rust()'s bits, or 0. */
uint64_t apptype_file(int fd);

#endif
