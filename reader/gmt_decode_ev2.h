/*
 * gmt_decode_ev2.h - EVENTS2's inner loop, private to reader/gmt_decode.c,
 * which includes it twice: once as is, once for processors with BMI2's
 * pext (a long varint's 7-bit groups packed in one instruction instead of
 * three mask-and-shift steps). The includer defines
 *   EV2_UV      the long-varint function's name
 *   EV2_LOOP    the loop's name
 *   EV2_TARGET  the functions' target attribute (empty, or target("bmi2"))
 *   EV2_GATHER(w, bits)  w's low bits/8 bytes (2 to 8) as the varint's
 *               value: the bytes past them dropped, the 7-bit groups packed
 * and undefines them after. Both copies read every record the same way and
 * refuse the same damage with the same message (tests/unit/unit_decode_*).
 */

/* A varint of two bytes or more (the first is known to have its high bit
 * set). Away from the column's end (10 bytes, the longest varint) no byte
 * needs a bounds check of its own: every length is taken in straight code
 * (the same values and the same refusals as gmt_uvarint_get), near the end
 * the general way. Inlined: it is the decoder's inner loop (mixed sizes
 * and addresses make two of an event's varints long). */
static inline __attribute__((always_inline)) EV2_TARGET int EV2_UV(const uint8_t **pp, const uint8_t *end,
								    uint64_t *out)
{
	const uint8_t *p = *pp;
	if (GMT_LIKELY_DEC(end - p >= 10)) {
		/* Up to 8 bytes without a branch on the length (mixed sizes
		 * and addresses make it unpredictable): the first byte without
		 * its high bit found in one little-endian word, then EV2_GATHER
		 * drops the bytes past it and packs the 7-bit groups. */
		uint64_t w;
		memcpy(&w, p, 8);
		const uint64_t stop = ~w & 0x8080808080808080ull;
		if (GMT_LIKELY_DEC(stop != 0)) {
			const unsigned bits = (unsigned)__builtin_ctzll(stop) + 1;   /* 8 * len, 16..64 */
			w = EV2_GATHER(w, bits);
			*pp = p + bits / 8;
			*out = w;
			return 0;
		}
		uint64_t v = p[0] & 0x7f, b;
#define UV_STEP(i) \
		b = p[i]; \
		v |= (b & 0x7f) << (7 * (i)); \
		if (b < 0x80) { \
			*pp = p + (i) + 1; \
			*out = v; \
			return 0; \
		}
		UV_STEP(1) UV_STEP(2) UV_STEP(3) UV_STEP(4) UV_STEP(5) UV_STEP(6) UV_STEP(7) UV_STEP(8)
#undef UV_STEP
		b = p[9];
		if (b > 1)
			return -1;   /* past 64 bits, or longer than 10 bytes */
		*pp = p + 10;
		*out = v | b << 63;
		return 0;
	}
	return gmt_uvarint_get(pp, end, out);
}

/* Decodes an EVENTS2 record's n events from its columns [p[c], e[c])
 * (their count and the type and mask columns' lengths already checked) into
 * d->ev, and hands them to the visitor; an EVENTS3 record (rn, its name in
 * messages) the same with its ALLOCs' and FREEs' addr deltas and sizes
 * multiplied by 2^GMT_SHIFTS_ADDR(shifts) and 2^GMT_SHIFTS_SIZE(shifts). */
static inline EV2_TARGET int EV2_LOOP(dec_t *d, uint64_t n, uint64_t base, uint32_t flags, uint32_t shifts,
				      const char *rn, const uint8_t *const *p, const uint8_t *const *e)
{
	int bad = -1;
	/* Each type's previous values (device, stream, stack, aux, size,
	 * addr: 0, device -1, at the record's start) are kept as that type's
	 * whole event: an event starts as a copy of it (a few wide moves), and
	 * only the fields its mask names are decoded, into the copy and the
	 * template both. The thread is the previous event's, whatever its
	 * type. Fields are taken in the column order below, so the first
	 * damage is the same whatever the record holds. */
	gmt_devent_t tmpl[128];
	memset(tmpl, 0, sizeof(tmpl));
	for (unsigned t = 0; t < 128; t++) {
		tmpl[t].type = (uint16_t)t;
		tmpl[t].device = -1;
	}
	/* each type's shifts: EVENTS3's for ALLOC and FREE, else 0 */
	uint8_t sh_a[128], sh_s[128];
	memset(sh_a, 0, sizeof(sh_a));
	memset(sh_s, 0, sizeof(sh_s));
	sh_a[GMT_EV_ALLOC] = sh_a[GMT_EV_FREE] = (uint8_t)GMT_SHIFTS_ADDR(shifts);
	sh_s[GMT_EV_ALLOC] = sh_s[GMT_EV_FREE] = (uint8_t)GMT_SHIFTS_SIZE(shifts);
	gmt_devent_t *ev = d->ev;
	const uint8_t *types = p[GMT_C2_TYPE], *masks = p[GMT_C2_MASK];
	const uint8_t *pt = p[GMT_C2_TS], *pth = p[GMT_C2_THREAD], *pd = p[GMT_C2_DEVICE],
		      *pst = p[GMT_C2_STREAM], *pk = p[GMT_C2_STACK], *px = p[GMT_C2_AUX],
		      *pr = p[GMT_C2_REF], *pa = p[GMT_C2_ADDR], *ps = p[GMT_C2_SIZE];
	uint64_t ts = base, thread = 0, ref = 0, v;
	const char *why = NULL;
	uint32_t why_id = 0;
	size_t i;
	for (i = 0; i < n; i++) {
		gmt_devent_t *x = &ev[i];
		unsigned t = types[i], m = masks[i];
		if (t >= 128 || (m & ~GMT_M_ALL)) {
			why = t >= 128 ? "an event type above 127" : "a mask with bit 7 set";
			goto fail;
		}
		gmt_devent_t *T = &tmpl[t];
		UVF(EV2_UV, pt, e[GMT_C2_TS], v, GMT_C2_TS);
		ts += v;
		if (__builtin_expect(m & (GMT_M_THREAD | GMT_M_DEVICE | GMT_M_STREAM | GMT_M_STACK | GMT_M_AUX), 0)) {
			if (m & GMT_M_THREAD) {
				UVF(EV2_UV, pth, e[GMT_C2_THREAD], thread, GMT_C2_THREAD);
				if (thread > UINT32_MAX) {
					bad = GMT_C2_THREAD;
					goto fail;
				}
			}
			if (m & GMT_M_DEVICE) {
				UVF(EV2_UV, pd, e[GMT_C2_DEVICE], v, GMT_C2_DEVICE);
				if (v > (uint64_t)INT16_MAX + 1) {
					bad = GMT_C2_DEVICE;
					goto fail;
				}
				T->device = (int16_t)((int64_t)v - 1);
			}
			if (m & GMT_M_STREAM) {
				UVF(EV2_UV, pst, e[GMT_C2_STREAM], v, GMT_C2_STREAM);
				T->stream += (uint64_t)gmt_unzigzag(v);
			}
			if (m & GMT_M_STACK) {
				UVF(EV2_UV, pk, e[GMT_C2_STACK], v, GMT_C2_STACK);
				if (v > UINT32_MAX) {
					bad = GMT_C2_STACK;
					goto fail;
				}
				T->stack = (uint32_t)v;
			}
			if (m & GMT_M_AUX)
				UVF(EV2_UV, px, e[GMT_C2_AUX], T->aux, GMT_C2_AUX);
		}
		if (m & GMT_M_SIZE) {
			UVF(EV2_UV, ps, e[GMT_C2_SIZE], v, GMT_C2_SIZE);
			T->size = v << sh_s[t];
		}
		*x = *T;
		x->ts = ts;
		x->thread = (uint32_t)thread;
		if (t == GMT_EV_FREE && !(m & GMT_M_NOID)) {
			UVF(EV2_UV, pr, e[GMT_C2_REF], v, GMT_C2_REF);
			uint64_t id = ref + (uint64_t)gmt_unzigzag(v);
			if (id == 0 || id > d->id_next || !(d->id_live[id >> 6] >> (id & 63) & 1)) {
				why = "a free of an allocation id that is not live";
				why_id = (uint32_t)id;
				goto fail;
			}
			d->id_live[id >> 6] &= ~(1ull << (id & 63));
			d->id_free[d->id_nfree++] = (uint32_t)id;
			ref = id;
			x->alloc_id = (uint32_t)id;
			x->addr = d->id_addr[id];
			continue;
		}
		UVF(EV2_UV, pa, e[GMT_C2_ADDR], v, GMT_C2_ADDR);
		T->addr += (uint64_t)gmt_unzigzag(v) << sh_a[t];
		x->addr = T->addr;
		if (t == GMT_EV_ALLOC && !(m & GMT_M_NOID)) {
			uint32_t id;
			if (d->id_nfree) {
				id = d->id_free[--d->id_nfree];
			} else {
				if (d->id_next >= GMT_IDS_LIMIT) {
					why = "an allocation id beyond the limit";
					goto fail;
				}
				id = ++d->id_next;
				if (grow((void **)&d->id_addr, &d->ids_cap, (size_t)id + 1, sizeof(*d->id_addr)) ||
				    grow((void **)&d->id_live, &d->id_live_cap, ((size_t)id >> 6) + 1,
					 sizeof(*d->id_live)) ||
				    grow((void **)&d->id_free, &d->id_free_cap, (size_t)id + 1,
					 sizeof(*d->id_free)))
					return oom(d);
				/* ids are handed out in order: a new word of the
				 * bitmap starts clear (ids start at 1) */
				if ((id & 63) == 0 || id == 1)
					d->id_live[id >> 6] = 0;
			}
			d->id_addr[id] = x->addr;
			d->id_live[id >> 6] |= 1ull << (id & 63);
			ref = id;
			x->alloc_id = id;
		}
	}
	const uint8_t *ends[GMT_C2_COUNT] = { e[0], pt, e[GMT_C2_MASK], pth, pd, pst, pk, px, pr, pa, ps };
	for (int c = 1; c < GMT_C2_COUNT; c++) {
		if (ends[c] != e[c]) {
			bad = c;
			goto fail;
		}
	}
	d->res->events += n;
	return CB(d, events, ev, (size_t)n, flags);
fail:
	if (why && why_id)
		return damage(d, d->frame_off, "record %zu (%s) of the frame: event %zu is %s (%u)",
			      d->rec, rn, i, why, why_id);
	if (why)
		return damage(d, d->frame_off, "record %zu (%s) of the frame: event %zu has %s",
			      d->rec, rn, i, why);
	return damage(d, d->frame_off, "column %s has wrong length in record %zu (%s) of the frame",
		      col2_names[bad], d->rec, rn);
}
