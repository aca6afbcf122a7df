/*
 * gmt_symbols.h - offline symbolisation of the trace's return addresses
 * (private to analyzer/ and its tests).
 *
 * The trace holds, per module the traced process had mapped, its path, load
 * bias, size and GNU build id (MODULE records), and per call stack the raw
 * return addresses (STACK records). A symbol table is filled with the
 * MODULE records, then asked for addresses; each distinct address is
 * resolved once (elfutils libdw) and cached. Strings returned stay valid
 * until gmt_symtab_free.
 */
#ifndef GMT_SYMBOLS_H
#define GMT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_decode.h"

#include "support/gmt_u64map.h"

/* Why a frame has no function name. */
enum gmt_sym_status {
	GMT_SYM_OK = 0,         /* resolved (function may still be NULL)      */
	GMT_SYM_NO_MODULE,      /* no MODULE record covers the address        */
	GMT_SYM_MISSING,        /* the module's file cannot be read           */
	GMT_SYM_MISMATCH,       /* the file's build id differs from the trace */
	GMT_SYM_OFF             /* symbolisation turned off                   */
};

/* One source-level frame. An address in inlined code yields several, the
 * innermost (the inlined function) first; all but the last have inlined = 1
 * (they were inlined into the next one). */
typedef struct gmt_symframe {
	const char *function;   /* demangled; NULL: no symbol                  */
	const char *file;       /* source file from DWARF; NULL: none          */
	unsigned line;          /* 0: none                                     */
	int inlined;
} gmt_symframe_t;

typedef struct gmt_sym {
	uint64_t addr;          /* the return address as recorded              */
	enum gmt_sym_status status;
	const char *module;     /* path; NULL: none                            */
	uint64_t offset;        /* addr - load bias (an ELF vaddr)             */
	size_t n;               /* frames, >= 1                                */
	gmt_symframe_t *frames;
	const char *label;      /* one line: the outermost source frame's name,
				   or "[path+0xoffset]", "[build id mismatch:
				   path]", "[0xaddr]"                         */
} gmt_sym_t;

typedef struct gmt_symtab gmt_symtab_t;

/* A table searching debug_dirs (each a root holding .build-id/xx/rest.debug)
 * for separate debug files, then the default places. enabled = 0: no debug
 * information is read (only each module file's program headers, for its
 * address range) and every address is reported as "[path+0xoffset]". NULL
 * when out of memory. */
gmt_symtab_t *gmt_symtab_new(const char *const *debug_dirs, size_t n_dirs, int enabled);
void gmt_symtab_free(gmt_symtab_t *t);

/* Records a MODULE record (copied). Returns 0 or -ENOMEM. */
int gmt_symtab_module(gmt_symtab_t *t, const gmt_module_t *m);

/* The symbol of a return address; caller = 1 for every frame but the
 * innermost (the lookup is made at addr - 1, inside the call). Never NULL
 * except when out of memory. */
const gmt_sym_t *gmt_symtab_lookup(gmt_symtab_t *t, uint64_t addr, int caller);

/* Path of the module covering addr (latest loaded), or NULL. */
const char *gmt_symtab_module_of(gmt_symtab_t *t, uint64_t addr);

/* Distinct addresses resolved, modules opened, and the seconds spent. */
void gmt_symtab_stats(const gmt_symtab_t *t, uint64_t *addresses, uint64_t *files, double *seconds);

#endif /* GMT_SYMBOLS_H */
