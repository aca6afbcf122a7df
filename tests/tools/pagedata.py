"""The report page's data (docs/report-page.md, "The data") for the tests:
a level's arrays as plain lists, one element per bucket (delta coding
undone, the buckets a sparse level leaves out ("b") filled in with the one
before them)."""


def undelta(x):
    out, v = [], 0
    for d in x:
        v += d
        out.append(v)
    return out


def level(L):
    """{"at", "top", "low", "stack": {key: [...]}, "line_max", "line_min"},
    each list L["count"] long."""
    idx = undelta(L["b"]) if "b" in L else None

    def full(v):
        if idx is None:
            return list(v)
        out = []
        for j, i in enumerate(idx):
            end = idx[j + 1] if j + 1 < len(idx) else L["count"]
            out.extend([v[j]] * (end - i))
        return out

    r = {"at": full(L["at"]), "top": full(undelta(L["top"])), "low": full(undelta(L["low"]))}
    for g in ("stack", "line_max", "line_min"):
        r[g] = {k: full(undelta(a)) for k, a in L[g].items()}
    return r


def listed(L):
    """How many buckets the level writes."""
    return len(L["b"]) if "b" in L else L["count"]
