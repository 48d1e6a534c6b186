/*
 * container_application_type: what a process is, by Coroot's rules
 * (apptype/apptype.go): its command line (argv[0]'s first word, ':' cut, by
 * suffix, and a few Java main classes anywhere in it), else its executable's
 * path (php, python, nodejs, ruby); plus golang (the executable has Go build
 * info) and rust (its .comment names rustc), from the file (apptype_file.c);
 * and dotnet as Coroot's .NET monitor finds it (containers/dotnet.go):
 * apptype_dotnet().
 * Types are bits of a uint64_t, named by apptype_name(). Pure.
 */
#ifndef NODESCOPE_RESOURCES_APPTYPE_H
#define NODESCOPE_RESOURCES_APPTYPE_H

#include <stdbool.h>
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

/*
 * Of the executable file fd: apptype_golang()'s and apptype_rust()'s bits, and
 * APPTYPE_FILE_APPHOST when its dynamic section's run path (DT_RPATH, else
 * DT_RUNPATH) is the one entry "$ORIGIN/netcoredeps" (a .NET apphost), or 0.
 */
uint64_t apptype_file(int fd);
#define APPTYPE_FILE_APPHOST (1ull << 63) /* not a type: apptype_dotnet() decides */

/*
 * Coroot's .NET test of a process: not a JVM (argv[0] ends in "java"), and
 * either `dotnet NAME.dll` (argv[0] ends in "dotnet", argv[1] in ".dll") or
 * an apphost (apphost: its executable's APPTYPE_FILE_APPHOST) whose argv[0]
 * has a last path component (the application's name). cmdline as above.
 */
bool apptype_dotnet(const char *cmdline, size_t len, bool apphost);
int apptype_dotnet_bit(void);

#endif
