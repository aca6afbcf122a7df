/* gmt_names.c - printable names of the format's numbers (reader side), made
 * from the lists of tracer/gmt_format.def. */
#include "gmt_decode.h"

static const char *const ev_names[] = {
#define GMT_EV(name, number, key) [number] = key,
#include "gmt_format.def"
};
static const char *const kind_names[] = {
#define GMT_KIND(name, number, key) [number] = key,
#include "gmt_format.def"
};
static const char *const api_names[] = {
#define GMT_API(name, number, key) [number] = key,
#include "gmt_format.def"
};
static const char *const owner_names[] = {
#define GMT_OWNER(name, number, key) [number] = key,
#include "gmt_format.def"
};

/* An array's length is its largest designated index + 1: the maxima of
 * gmt_format.h (each list's last number) must be the largest. A number
 * given twice is a -Woverride-init warning (an error with WERROR). */
#define N(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(N(ev_names) == GMT_EV_TYPE_MAX + 1, "gmt_format.def: event types must ascend");
_Static_assert(N(kind_names) == GMT_KIND_MAX + 1, "gmt_format.def: kinds must ascend");
_Static_assert(N(api_names) == GMT_API_MAX + 1, "gmt_format.def: apis must ascend");
_Static_assert(N(owner_names) == GMT_OWNER_MAX + 1, "gmt_format.def: owners must ascend");

static const char *const sync_names[] = { "?", "stream", "context", "event" };

static const char *name_of(const char *const *names, size_t n, unsigned x)
{
	return x < n && names[x] ? names[x] : "?";
}

int gmt_ev_type_known(unsigned type)
{
	return type > 0 && type < N(ev_names) && ev_names[type];
}

const char *gmt_ev_type_name(unsigned type)
{
	return name_of(ev_names, N(ev_names), type);
}

const char *gmt_kind_name(unsigned kind)
{
	return name_of(kind_names, N(kind_names), kind);
}

const char *gmt_api_name(unsigned api)
{
	return name_of(api_names, N(api_names), api);
}

const char *gmt_owner_name(unsigned owner)
{
	return name_of(owner_names, N(owner_names), owner);
}

const char *gmt_sync_name(unsigned kind)
{
	return kind <= GMT_SYNC_EVENT ? sync_names[kind] : "?";
}
