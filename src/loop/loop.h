/*
 * The one epoll loop. Every source is a file descriptor; timers are timerfds
 * armed only while needed; slow work runs in bounded slices between events.
 * At rest the loop sleeps in epoll_wait with no timeout.
 */
#ifndef NODESCOPE_LOOP_LOOP_H
#define NODESCOPE_LOOP_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
struct loop_timer;

typedef void (*loop_fd_fn)(void *ctx, uint32_t events);
typedef void (*loop_timer_fn)(void *ctx);
/* Does one bounded slice of work; returns true while more is pending. */
typedef bool (*loop_work_fn)(void *ctx);

int loop_new(struct loop **out);
void loop_free(struct loop *l);

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx);
int loop_del_fd(struct loop *l, int fd);

/* The timer belongs to the loop: loop_free() frees it. */
int loop_timer_new(struct loop *l, loop_timer_fn fn, void *ctx, struct loop_timer **out);
/* One-shot, relative. Re-arming replaces the pending expiry. */
int loop_timer_arm(struct loop_timer *t, uint64_t after_ns);
/* Fires every period_ns until disarmed: one system call for a run of periods, not one each. */
int loop_timer_arm_every(struct loop_timer *t, uint64_t period_ns);
int loop_timer_disarm(struct loop_timer *t);
bool loop_timer_armed(const struct loop_timer *t);

/* Registers a slice worker; loop_work_pending() marks it as having work. */
int loop_add_worker(struct loop *l, loop_work_fn fn, void *ctx, int *id_out);
void loop_work_pending(struct loop *l, int id);

/* Runs until loop_stop(); returns 0 or -errno. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

/* How often the loop woke up (for self-metrics). */
uint64_t loop_wakeups(const struct loop *l);

#endif
