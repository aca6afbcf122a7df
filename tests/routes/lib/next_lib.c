/*
 * next_lib.c - built twice, as libroute_next_a.so (ROUTE_NEXT_NAME 'A') and
 * libroute_next_b.so ('B'), both defining route_probe(). A's route_next()
 * asks dlsym(RTLD_NEXT, "route_probe"): glibc answers relative to the
 * caller, so it must be B's, with or without our dlsym in between (route 8).
 */
#include <dlfcn.h>

char route_probe(void);
char route_probe(void)
{
	return ROUTE_NEXT_NAME;
}

#if ROUTE_NEXT_NAME == 'A'
char route_next(void);
char route_next(void)
{
	char (*next)(void) = (char (*)(void))dlsym(RTLD_NEXT, "route_probe");
	return next ? next() : '?';
}
#endif
