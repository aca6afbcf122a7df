/*
 * gmt_pickle.h - a streaming writer of Python pickles (output only), for the
 * memory-viz export: PyTorch's memory viewer reads snapshots as pickles of
 * protocol 2 to 4, with its own small unpickler.
 *
 * Only plain values: dicts, lists, str, int, float, bool, None, written with
 * the opcodes that both Python's unpickler and the viewer's read (PROTO,
 * EMPTY_DICT, EMPTY_LIST, MARK, SETITEMS, APPENDS, SHORT_BINUNICODE,
 * BINUNICODE, BININT1, BININT2, BININT, LONG1, BINFLOAT, NEWTRUE, NEWFALSE,
 * NONE, STOP, and for strings seen before MEMOIZE, BINPUT, LONG_BINPUT,
 * BINGET, LONG_BINGET: a repeated text is a reference to its first
 * occurrence, as Python's own pickler writes it); no frames, no class. Items go out in batches of at
 * most GMT_PICKLE_BATCH (as Python's own pickler batches them): the viewer
 * spreads a batch into one function call, which a long one would overflow.
 * Errors are sticky: the first one is kept and returned by
 * gmt_pickle_close(); calls after it do nothing. The bytes reach out in
 * blocks of 64 KiB, the last at gmt_pickle_close(): nothing else may be
 * written to out while the pickle is open.
 */
#ifndef GMT_PICKLE_H
#define GMT_PICKLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GMT_PICKLE_BATCH 1000
#define GMT_PICKLE_MAX_DEPTH 64

typedef struct gmt_pickle gmt_pickle_t;

/* Starts a pickle of protocol 2, 3 or 4 on out; NULL when out of memory or
   the protocol is another (errno EINVAL). */
gmt_pickle_t *gmt_pickle_open(FILE *out, int protocol);

/* Containers. In a dict, values alternate with their keys: key, value, key,
   value... (a key is any value; the viewer reads str keys). */
void gmt_pickle_dict_begin(gmt_pickle_t *p);
void gmt_pickle_dict_end(gmt_pickle_t *p);
void gmt_pickle_list_begin(gmt_pickle_t *p);
void gmt_pickle_list_end(gmt_pickle_t *p);

/* Scalars. str takes UTF-8 (written as given; Python refuses invalid
   UTF-8, so the caller gives valid text); str_n takes a length. */
void gmt_pickle_str(gmt_pickle_t *p, const char *s);
/* The same for a string constant: s has static storage and stays the same
   while the pickle is open (a literal, e.g. a dict's key); its memo entry
   is found by its address, without reading it again. */
void gmt_pickle_str_static(gmt_pickle_t *p, const char *s);
void gmt_pickle_str_n(gmt_pickle_t *p, const char *s, size_t n);
void gmt_pickle_int(gmt_pickle_t *p, int64_t v);
void gmt_pickle_uint(gmt_pickle_t *p, uint64_t v);
void gmt_pickle_float(gmt_pickle_t *p, double v);
void gmt_pickle_bool(gmt_pickle_t *p, int v);
void gmt_pickle_none(gmt_pickle_t *p);

/* Writes STOP after the one top-level value and frees p. Returns 0, or
   -EINVAL (not exactly one top-level value, an open container, a dict with
   a key and no value, nesting beyond GMT_PICKLE_MAX_DEPTH), -EIO (out
   failed) or -ENOMEM. Does not close out. */
int gmt_pickle_close(gmt_pickle_t *p);

#ifdef __cplusplus
}
#endif

#endif
