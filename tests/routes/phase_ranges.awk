# Reads gmt-dump output; prints one line per range event, in file order:
#   TYPE tN depth=D src=S id=I name=NAME domain=DOMAIN
# tN numbers threads by first appearance among these events (t0 first);
# NAME and DOMAIN are STRING texts, "-" for id 0 (NVTX's default domain, a
# pop). Used by tests/cases/phase_*.sh, nvtx_*.sh and python_api.sh.
function hex(s,    v, i, c) {
	v = 0
	for (i = 3; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + c
	}
	return v
}
/^STRING id=/ {
	id = substr($2, 4)
	t = $0
	sub(/^STRING id=[0-9]+ text=/, "", t)
	str[id] = t
	next
}
/^EV (range_begin|range_end|mark) / {
	delete f
	for (i = 3; i <= NF; i++) {
		eq = index($i, "=")
		f[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
	if (!(f["thread"] in tn))
		tn[f["thread"]] = nt++
	aux = f["aux"] + 0
	name = aux % 4294967296
	dom = int(aux / 4294967296)
	printf "%s t%d depth=%s src=%d id=%d name=%s domain=%s\n", $2, tn[f["thread"]], f["size"],
		hex(f["stream"]), hex(f["addr"]), name ? str[name] : "-", dom ? str[dom] : "-"
}
