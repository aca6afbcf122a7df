"""Which paths of schemas/report.schema.json no frozen output exercises.

    python3 schema_paths.py SCHEMA UNCOVERED_LIST check|update DOC.json...

A path is a chain of member names from the document's top, "[]" for the
items of an array, "*" for any member of a map (".traces[].devices[].peak.
bytes"), followed through $ref, oneOf/anyOf/allOf and if/then/else. Every
path the schema describes must appear in some DOC (the frozen --json
outputs, the symbolised live ones, unit_report's dump) or be listed in
UNCOVERED_LIST, the paths known to have no output yet, which only shrinks:
check fails on a new path without an output (a field added to a model, the
schema and a renderer but printed by no frozen command line) and on a
listed path that now has one (take it off the list). update rewrites the
list. Members a document has and the schema lacks are the validator's
(additionalProperties: false).
"""
import json
import sys

schema_file, list_file, mode = sys.argv[1:4]
schema = json.load(open(schema_file))


def resolve(ref):
    x = schema
    for p in ref.lstrip("#/").split("/"):
        x = x[p]
    return x


paths = set()


def walk(x, path, refs):
    if not isinstance(x, dict):
        return
    if "$ref" in x and x["$ref"] not in refs:
        walk(resolve(x["$ref"]), path, refs | {x["$ref"]})
    for k in ("oneOf", "anyOf", "allOf"):
        for y in x.get(k, []):
            walk(y, path, refs)
    for k in ("then", "else"):
        walk(x.get(k), path, refs)
    for name, y in x.get("properties", {}).items():
        paths.add(path + "." + name)
        walk(y, path + "." + name, refs)
    if isinstance(x.get("items"), dict):
        walk(x["items"], path + "[]", refs)
    for y in x.get("prefixItems", []):
        walk(y, path + "[]", refs)
    if isinstance(x.get("additionalProperties"), dict):
        walk(x["additionalProperties"], path + ".*", refs)


walk(schema, "", frozenset())
seen = set()


def doc(x, path):
    if isinstance(x, dict):
        for k, v in x.items():
            for p in (path + "." + k, path + ".*"):
                seen.add(p)
                doc(v, p)
    elif isinstance(x, list):
        for v in x:
            doc(v, path + "[]")


for f in sys.argv[4:]:
    doc(json.load(open(f)), "")
uncovered = sorted(p for p in paths if p not in seen)
if mode == "update":
    with open(list_file, "w") as out:
        out.write("# Paths of schemas/report.schema.json that no frozen output has yet\n"
                  "# (tests/frozen/schema_paths.py; rewritten by run.sh BUILD update).\n")
        out.writelines(p + "\n" for p in uncovered)
    sys.exit(0)
listed = {l.strip() for l in open(list_file) if l.strip() and not l.startswith("#")}
bad = 0
for p in uncovered:
    if p not in listed:
        bad = 1
        print("schema path %s: in no frozen output (add a command line to commands.txt that "
              "prints it)" % p, file=sys.stderr)
for p in sorted(listed - set(uncovered)):
    bad = 1
    print("schema path %s: now in a frozen output (or gone from the schema): take it off %s"
          % (p, list_file), file=sys.stderr)
print("schema paths: %d, in frozen outputs %d, listed as uncovered %d"
      % (len(paths), len(paths) - len(uncovered), len(uncovered)))
sys.exit(bad)
