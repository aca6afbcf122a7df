/* stack_nofp_lib.c - a library built without frame pointers, for
 * stack_walk.c: its functions sit in the middle of the stacks that test
 * calls back through (and one uses %rbp as an ordinary register). */
#include <stdint.h>

typedef void (*stack_walk_cb)(int);

int stack_nofp_through(stack_walk_cb cb, int arg);
int stack_nofp_busy_rbp(stack_walk_cb cb, int arg);

static volatile int sink;

__attribute__((noinline)) int stack_nofp_through(stack_walk_cb cb, int arg)
{
	cb(arg);
	sink = arg;   /* not a tail call: this frame stays on the stack */
	return sink;
}

/* Keeps values live across the call in every callee-saved register the
 * compiler has, %rbp among them (without frame pointers it is one). */
__attribute__((noinline)) int stack_nofp_busy_rbp(stack_walk_cb cb, int arg)
{
	int a = sink + 1, b = sink + 2, c = sink + 3, d = sink + 4, e = sink + 5, f = sink + 6;
	cb(arg);
	sink = a * b + c * d + e * f;
	return sink;
}
