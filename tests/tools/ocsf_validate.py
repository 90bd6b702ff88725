#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Validates OCSF events (JSON lines) against the OCSF schema files of one release.

    ocsf_validate.py SCHEMA_DIR [FILE]      (FILE, or standard input: one event per line)

SCHEMA_DIR holds the release's own files, unchanged (tests/siem/ocsf-1.8.0: dictionary.json,
categories.json, events/, objects/, profiles/). They are not JSON Schema: this compiles the
event class an event names (class_uid) into a JSON Schema (draft 2020-12) and validates the
event with python3-jsonschema:

  - the class's attributes are those of its "extends" chain (base_event, the category's class,
    the class), with "$include"d profile files merged in; an attribute a profile brings is
    allowed only when the event lists that profile in metadata.profiles;
  - each attribute's type comes from dictionary.json: scalar types resolve to their base type
    (string_t, integer_t, long_t, float_t, boolean_t, json_t) with the type's regex; object
    types compile recursively the same way (extends, includes, profiles); is_array makes an
    array;
  - "requirement": "required" attributes are required; no attribute outside the class is
    allowed (additionalProperties false), except inside the generic "object" type (unmapped);
  - enumerated *_id attributes take only their enum's values; class_uid, category_uid and
    type_uid must be the class's own (type_uid = class_uid * 100 + activity_id);
  - object "constraints" (at_least_one, just_one) are enforced.

Exit 0 if every event validates, 1 (with the first errors of each bad event) if not, 2 on
usage or unreadable input. Prints "N events valid" or the errors.
"""
import glob
import json
import os
import sys

import jsonschema

BASE = {"string_t": {"type": "string"}, "integer_t": {"type": "integer"},
        "long_t": {"type": "integer"}, "float_t": {"type": "number"},
        "boolean_t": {"type": "boolean"}, "json_t": {}}


class Schema:
    def __init__(self, root):
        self.root = root
        with open(os.path.join(root, "dictionary.json")) as f:
            d = json.load(f)
        self.dict = d["attributes"]
        self.types = d["types"]["attributes"]
        with open(os.path.join(root, "categories.json")) as f:
            self.categories = json.load(f)["attributes"]
        with open(os.path.join(root, "version.json")) as f:
            self.version = json.load(f)["version"]
        self.events = {}
        for p in glob.glob(os.path.join(root, "events", "**", "*.json"), recursive=True):
            with open(p) as f:
                e = json.load(f)
            self.events[e["name"]] = e
        self.objects = {}
        for p in glob.glob(os.path.join(root, "objects", "*.json")):
            with open(p) as f:
                o = json.load(f)
            self.objects[o["name"]] = o
        self.by_uid = {}
        for name, e in self.events.items():
            if "uid" not in e and name != "base_event":
                continue
            cat = self._category_of(name)
            cuid = self.categories[cat]["uid"] if cat in self.categories else 0
            uid = 0 if name == "base_event" else cuid * 1000 + e["uid"]
            self.by_uid[uid] = (name, cuid)
        self.cache = {}

    def _category_of(self, name):
        while name:
            e = self.events[name]
            if e.get("category") and e["category"] != "other":
                return e["category"]
            name = e.get("extends")
        return "other"

    def _include(self, path):
        with open(os.path.join(self.root, path)) as f:
            inc = json.load(f)
        prof = inc["name"] if inc.get("meta") == "profile" else None
        out = {}
        for k, v in inc.get("attributes", {}).items():
            v = dict(v)
            if prof and "profile" not in v:
                v["profile"] = prof
            out[k] = v
        return out

    def _attrs(self, item, table):
        """The merged attributes of an event class or object (extends chain, includes)."""
        chain = []
        while item:
            chain.append(item)
            ext = item.get("extends")
            item = table.get(ext) if ext else None
        attrs = {}
        for it in reversed(chain):
            own = dict(it.get("attributes", {}))
            incs = own.pop("$include", [])
            if isinstance(incs, str):
                incs = [incs]
            for p in incs:
                for k, v in self._include(p).items():
                    attrs[k] = merge(attrs.get(k, {}), v)
            for k, v in own.items():
                attrs[k] = merge(attrs.get(k, {}), v)
        return attrs, chain

    def _type_schema(self, tname, profiles, defs):
        if tname in BASE:
            return dict(BASE[tname])
        if tname in self.types:
            t = self.types[tname]
            s = dict(BASE.get(t.get("type") or tname, {}))
            if "regex" in t:
                s["pattern"] = t["regex"]
            if t.get("values"):
                s["enum"] = t["values"]
            if "max_len" in t and s.get("type") == "string":
                s["maxLength"] = t["max_len"]
            return s
        if tname == "object":
            return {"type": "object"}  # the generic object: any members (unmapped)
        if tname not in self.objects:
            raise KeyError("unknown type %s" % tname)
        if tname not in defs:
            defs[tname] = None  # placeholder: recursion goes by $ref
            obj = self.objects[tname]
            attrs, chain = self._attrs(obj, self.objects)
            defs[tname] = self._members(attrs, profiles, defs)
            cons = {}
            for it in chain:
                cons.update(it.get("constraints", {}))
            all_of = []
            for kind, names in cons.items():
                reqs = [{"required": [n]} for n in names]
                if kind == "at_least_one":
                    all_of.append({"anyOf": reqs})
                elif kind == "just_one":
                    all_of.append({"oneOf": reqs})
            if all_of:
                defs[tname]["allOf"] = all_of
        return {"$ref": "#/$defs/" + tname}

    def _members(self, attrs, profiles, defs):
        props, req = {}, []
        for k, a in attrs.items():
            prof = a.get("profile")
            if prof and prof not in profiles:
                continue
            d = self.dict.get(k)
            if d is None:
                raise KeyError("attribute %s is not in the dictionary" % k)
            tname = a.get("type") or d.get("type")
            s = self._type_schema(tname, profiles, defs)
            enum = dict(d.get("enum", {}))
            enum.update(a.get("enum", {}))
            if enum and tname in ("integer_t", "long_t"):
                s = dict(s, enum=sorted(int(x) for x in enum))
            if a.get("is_array", d.get("is_array")):
                s = {"type": "array", "items": s}
            props[k] = s
            if a.get("requirement") == "required":
                req.append(k)
        return {"type": "object", "properties": props, "required": sorted(req),
                "additionalProperties": False}

    def class_schema(self, class_uid, profiles):
        key = (class_uid, tuple(sorted(profiles)))
        if key in self.cache:
            return self.cache[key]
        name, cuid = self.by_uid[class_uid]
        attrs, _ = self._attrs(self.events[name], self.events)
        defs = {}
        s = self._members(attrs, set(profiles), defs)
        acts = s["properties"]["activity_id"].get("enum", [])
        s["properties"]["class_uid"] = {"const": class_uid}
        s["properties"]["category_uid"] = {"const": cuid}
        s["properties"]["type_uid"] = {"enum": [class_uid * 100 + a for a in acts]}
        s["$defs"] = defs
        s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        v = jsonschema.Draft202012Validator(s)
        self.cache[key] = v
        return v

    def validate(self, ev):
        """The list of errors of one event (empty: valid)."""
        if not isinstance(ev, dict):
            return ["not a JSON object"]
        cu = ev.get("class_uid")
        if cu not in self.by_uid:
            return ["class_uid %r is not a class of OCSF %s" % (cu, self.version)]
        md = ev.get("metadata") if isinstance(ev.get("metadata"), dict) else {}
        profiles = md.get("profiles", [])
        if not isinstance(profiles, list) or not all(isinstance(p, str) for p in profiles):
            return ["metadata.profiles is not a list of names"]
        errs = ["%s: %s" % ("/".join(str(x) for x in e.absolute_path) or "(event)", e.message)
                for e in self.class_schema(cu, profiles).iter_errors(ev)]
        if isinstance(ev.get("activity_id"), int) and ev.get("type_uid") != cu * 100 + ev["activity_id"]:
            errs.append("type_uid %r is not class_uid * 100 + activity_id" % ev.get("type_uid"))
        if md.get("version") != self.version:
            errs.append("metadata.version %r is not %s" % (md.get("version"), self.version))
        return errs


def merge(a, b):
    out = dict(a)
    for k, v in b.items():
        if k == "enum" and isinstance(v, dict):
            e = dict(out.get("enum", {}))
            e.update(v)
            out["enum"] = e
        else:
            out[k] = v
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        sch = Schema(sys.argv[1])
        f = open(sys.argv[2]) if len(sys.argv) == 3 else sys.stdin
    except (OSError, ValueError, KeyError) as e:
        print("ocsf_validate: %s" % e, file=sys.stderr)
        return 2
    n = bad = 0
    for lineno, line in enumerate(f, 1):
        if not line.strip():
            continue
        n += 1
        try:
            ev = json.loads(line)
        except ValueError as e:
            errs = ["invalid JSON: %s" % e]
        else:
            errs = sch.validate(ev)
        if errs:
            bad += 1
            print("line %d: %d errors" % (lineno, len(errs)))
            for e in errs[:5]:
                print("  " + e)
    print("%d events, %d valid, %d invalid (OCSF %s)" % (n, n - bad, bad, sch.version))
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
