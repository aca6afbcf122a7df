/*
 * gmt_signals.c - the flush handlers on fatal signals, and the program's
 * view of its signal dispositions, which they must not change.
 *
 * For each of SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL and SIGABRT whose disposition is the default when tracing starts,
 * the tracer installs signal_flush: it ends the trace (END says which
 * signal, gmt_tracer_end) and then dies of the signal the default way. That
 * handler stands in for SIG_DFL and must look like it: the program's
 * sigaction() and signal() (interposed by the preload, which calls
 * gmt_tracer_sigaction) see, for a signal we hold, the default disposition
 * exactly as it was (or as the program last set it), so that a query, a
 * library that saves the previous handler and chains to it, and a
 * handler restored later all behave as without the tracer.
 *
 *   held[sig]   our handler is installed and the program's view is SIG_DFL
 *               (view[sig], its flags and mask as the program set them).
 *   The program sets a handler of its own, or SIG_IGN: it is installed as
 *               given, held is cleared; the old disposition it is told is
 *               the view.
 *   The program sets SIG_DFL (while tracing): ours goes back in its place.
 *   Someone changed the disposition behind our back (bsd_signal, sigset, a
 *               raw rt_sigaction): a query finds it and stops holding.
 *
 * No lock (sigaction is async-signal-safe and so must this be); a program
 * racing itself on one signal's disposition gets one of its two answers.
 * Real calls go to glibc's __sigaction, never to our own export.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "gmt_internal.h"

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* Under ThreadSanitizer (make tsan builds the tracer core without the
 * preload, so nothing exports sigaction there) the handler must be
 * installed through TSan's sigaction interceptor: TSan runs a handler it
 * does not know about in the middle of its own runtime, and the SIGTERM
 * flush of unit_tracer_kill then failed in 6 of 8 runs. */
#if defined(__SANITIZE_THREAD__)
#define __sigaction sigaction
#endif

static const int flush_signals[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
};

static _Atomic int held[NSIG];
static struct sigaction view[NSIG];

static int is_flush_signal(int sig)
{
	for (size_t i = 0; i < sizeof(flush_signals) / sizeof(flush_signals[0]); i++)
		if (flush_signals[i] == sig)
			return 1;
	return 0;
}

/* Ends the trace saying which signal killed the process (atomics, a futex
 * and a bounded wait: async-signal-safe), then dies the default way. */
static void signal_flush(int sig)
{
	int saved = errno;
	if (!gmt_tls_in_writer)
		gmt_tracer_end(GMT_END_SIGNAL, sig, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	__sigaction(sig, &sa, NULL);
	atomic_store(&held[sig], 0);
	raise(sig);   /* blocked until the handler returns, then default */
	errno = saved;
}

/* Puts signal_flush in place of the default; the program's view stays dfl.
 * Returns __sigaction's result; *old gets the disposition it replaced. */
static int hold(int sig, const struct sigaction *dfl, struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_flush;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	view[sig] = *dfl;
	int r = __sigaction(sig, &sa, old);
	if (r == 0)
		atomic_store(&held[sig], 1);
	return r;
}

void gmt_signals_install(void)
{
	for (size_t i = 0; i < sizeof(flush_signals) / sizeof(flush_signals[0]); i++) {
		int sig = flush_signals[i];
		struct sigaction old;
		if (atomic_load(&held[sig]) || __sigaction(sig, NULL, &old) ||
		    old.sa_handler != SIG_DFL)
			continue;
		hold(sig, &old, NULL);
	}
}

int gmt_tracer_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig <= 0 || sig >= NSIG || !is_flush_signal(sig))
		return __sigaction(sig, act, old);
	if (atomic_load(&held[sig])) {
		struct sigaction cur;
		if (__sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != signal_flush)
			atomic_store(&held[sig], 0);   /* changed behind our back */
	}
	if (atomic_load(&held[sig])) {
		struct sigaction was = view[sig];
		if (act && act->sa_handler == SIG_DFL) {
			view[sig] = *act;
		} else if (act) {
			int r = __sigaction(sig, act, NULL);
			if (r)
				return r;
			atomic_store(&held[sig], 0);
		}
		if (old)
			*old = was;
		return 0;
	}
	if (act && act->sa_handler == SIG_DFL && gmt_tracer_active() &&
	    gmt_g.cfg.install_signal_handlers)
		return hold(sig, act, old);
	return __sigaction(sig, act, old);
}
