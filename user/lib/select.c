// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* select.c - MNC-C candidate selection (see select.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/select.h"
#include "mnc_util.h"

mnc_reason mnc_valid_c(const mnc_policy *p, const mnc_contract *c, const mnc_set *fields, int recipient)
{
    (void)p;
    if (!mnc_set_subset(fields, &c->scope.fields))
        return MNC_R_CONTRACT_FIELDS;
    if (recipient != c->scope.recipient)
        return MNC_R_WRONG_RECIPIENT;
    return MNC_OK;
}

mnc_reason mnc_need(const mnc_policy *p, const mnc_set *fields, const char *purpose, int recipient)
{
    const mnc_requirement *r = mnc_policy_requirement(p, recipient, purpose);
    if (!r)
        return MNC_OK;
    return mnc_set_subset(&r->needs, fields) ? MNC_OK : MNC_R_INSUFFICIENT;
}

/* Direct-exposure matching (scope documented in select.h).
 *
 * Bytes that render as nothing or as blank space are skipped on both sides, so a value cannot
 * hide behind "onco logy", "oncology\n appointment", a soft hyphen or a zero-width space. ASCII
 * letters fold case; other bytes compare exactly (no Unicode case folding or homoglyphs - that
 * is semantic exposure, which this literal scan does not claim to catch). */
static size_t ignorable(const unsigned char *s)
{
    switch (s[0]) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case '\v':
    case '\f':
        return 1;
    case 0xc2: /* U+00A0 no-break space, U+00AD soft hyphen */
        return s[1] == 0xa0 || s[1] == 0xad ? 2 : 0;
    case 0xe2: /* U+2000..U+200D spaces and zero-widths, U+202F, U+205F, U+2060 word joiner */
        if (s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8d) || s[2] == 0xaf))
            return 3;
        if (s[1] == 0x81 && (s[2] == 0x9f || s[2] == 0xa0))
            return 3;
        return 0;
    case 0xe3: /* U+3000 ideographic space */
        return s[1] == 0x80 && s[2] == 0x80 ? 3 : 0;
    case 0xef: /* U+FEFF zero-width no-break space */
        return s[1] == 0xbb && s[2] == 0xbf ? 3 : 0;
    }
    return 0;
}

static const unsigned char *skip_ignorable(const unsigned char *s)
{
    size_t n;
    while ((n = ignorable(s)) > 0)
        s += n;
    return s;
}

static unsigned char fold(unsigned char c) { return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c; }

/* Number of bytes of s that are not ignorable: the length the 3-byte floor applies to. */
static size_t visible_len(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = skip_ignorable((const unsigned char *)s); *p; p = skip_ignorable(p + 1))
        n++;
    return n;
}

static bool match_at(const unsigned char *h, const unsigned char *n)
{
    for (;;) {
        n = skip_ignorable(n);
        if (!*n)
            return true;
        h = skip_ignorable(h);
        if (!*h || fold(*h) != fold(*n))
            return false;
        h++;
        n++;
    }
}

static bool contains_ci(const char *hay, const char *needle)
{
    const unsigned char *n = (const unsigned char *)needle;
    if (!*skip_ignorable(n))
        return false;
    for (const unsigned char *h = (const unsigned char *)hay; *h; h++)
        if (!ignorable(h) && match_at(h, n))
            return true;
    return false;
}

int mnc_exposure_scan(const mnc_state *st, const mnc_set *allowed, const char *text)
{
    if (!st || !text)
        return -1;
    for (int f = mnc_set_next(&st->present, -1); f >= 0; f = mnc_set_next(&st->present, f)) {
        if (mnc_set_has(allowed, (unsigned)f))
            continue;
        const char *v = st->value[f];
        if (v && visible_len(v) >= 3 && contains_ci(text, v))
            return f;
    }
    return -1;
}

static void fieldnames(const mnc_policy *p, const mnc_set *s, char *buf, size_t n)
{
    mnc_policy_fieldset_str(p, s, buf, n);
}

/* Scores one candidate: validity, need, values present, exposure, risk, MNC-L caps. */
static void score(const mnc_policy *p, const mnc_contract *c, const mnc_select_req *req, mnc_scored *sc,
                  const char *text)
{
    char names[120];
    mnc_set outside = mnc_set_minus(&sc->fields, &c->scope.fields);
    sc->risk = NAN;
    sc->verdict = mnc_valid_c(p, c, &sc->fields, req->recipient);
    if (sc->verdict == MNC_R_CONTRACT_FIELDS) {
        fieldnames(p, &outside, names, sizeof(names));
        const char *const parts[] = {"fields outside the contract: ", names};
        mnc_str_cat(sc->detail, sizeof(sc->detail), parts, 2);
    } else if (sc->verdict == MNC_R_WRONG_RECIPIENT) {
        snprintf(sc->detail, sizeof(sc->detail), "recipient is not the contract's recipient");
    }
    if (sc->verdict == MNC_OK) {
        sc->verdict = mnc_need(p, &sc->fields, c->purpose, req->recipient);
        if (sc->verdict != MNC_OK) {
            const mnc_requirement *r = mnc_policy_requirement(p, req->recipient, c->purpose);
            mnc_set missing = mnc_set_minus(&r->needs, &sc->fields);
            fieldnames(p, &missing, names, sizeof(names));
            snprintf(sc->detail, sizeof(sc->detail), "receiver needs %s", names);
        }
    }
    if (sc->verdict == MNC_OK) {
        mnc_set absent = mnc_set_minus(&sc->fields, &req->state->present);
        if (!mnc_set_empty(&absent)) {
            fieldnames(p, &absent, names, sizeof(names));
            sc->verdict = MNC_R_MISSING_VALUE;
            snprintf(sc->detail, sizeof(sc->detail), "private state lacks %s", names);
        }
    }
    if (sc->verdict == MNC_OK && text) {
        /* Direct exposure: the literal value of any field outside F in submitted text. */
        int f = mnc_exposure_scan(req->state, &c->scope.fields, text);
        if (f >= 0) {
            sc->verdict = MNC_R_DIRECT_EXPOSURE;
            snprintf(sc->detail, sizeof(sc->detail), "text contains the value of field %s", p->fields[f].name);
        }
    }
    /* Risk is computed for every candidate whose values exist, so the full list is scored. */
    unsigned n = mnc_set_count(&sc->fields);
    mnc_obs obs[MNC_MAX_FIELDS];
    bool have_all = mnc_set_subset(&sc->fields, &req->state->present);
    if (have_all) {
        unsigned k = 0;
        for (int f = mnc_set_next(&sc->fields, -1); f >= 0 && k < n; f = mnc_set_next(&sc->fields, f))
            obs[k++] = (mnc_obs){.field = (uint16_t)f, .value = req->state->value[f]};
        double r;
        /* ΔR = max(0, ...) is finite and >= 0 by definition; anything else is a broken model
         * and must never win the argmin (a NaN compares false both ways and would stick). */
        if (mnc_risk_charge(p, req->history, req->n_history, obs, k, &r) == 0 && isfinite(r) && r >= 0)
            sc->risk = r;
        else if (sc->verdict == MNC_OK) {
            sc->verdict = MNC_R_INTERNAL; /* fail closed: unknown risk is never admissible */
            snprintf(sc->detail, sizeof(sc->detail), "risk model cannot evaluate this release");
        }
    }
    if (sc->verdict == MNC_OK && req->limits) {
        const mnc_limits *l = req->limits;
        if (l->epsilon >= 0 && sc->risk > l->epsilon) {
            sc->verdict = MNC_R_OVER_EPSILON;
            snprintf(sc->detail, sizeof(sc->detail), "charge %.6g exceeds epsilon %.6g", sc->risk, l->epsilon);
        } else if (l->budget >= 0 && l->spent + sc->risk > l->budget) {
            sc->verdict = MNC_R_OVER_BUDGET;
            snprintf(sc->detail, sizeof(sc->detail), "spent %.6g + charge %.6g exceeds budget %.6g", l->spent, sc->risk,
                     l->budget);
        }
    }
    if (sc->verdict == MNC_OK)
        memcpy(sc->detail, "admissible", sizeof("admissible"));
}

/* Strict weak order for admissible candidates: risk, field count, policy before submitted,
 * declaration order. Returns true if a ranks before b. */
static bool ranks_before(const mnc_scored *a, const mnc_scored *b)
{
    /* Only finite, non-negative risks are admissible (score()); keep the order total anyway. */
    if (isnan(a->risk) != isnan(b->risk))
        return !isnan(a->risk);
    if (a->risk != b->risk && !isnan(a->risk))
        return a->risk < b->risk;
    unsigned na = mnc_set_count(&a->fields), nb = mnc_set_count(&b->fields);
    if (na != nb)
        return na < nb;
    if (a->submitted != b->submitted)
        return !a->submitted;
    return a->index < b->index;
}

mnc_reason mnc_select(const mnc_policy *p, const mnc_select_req *req, mnc_selection *out)
{
    if (!out)
        return MNC_R_INVALID;
    /* only the header here; each candidate is cleared when it is filled in: readers look at
     * c[0..n) only, and clearing all MNC_MAX_CANDIDATES (tens of KiB) was ~6% of a disclose's
     * instructions in mncd */
    out->n = 0;
    out->chosen = -1;
    out->contract = req ? req->contract : -1;
    if (!p || !req || !req->state || req->contract < 0 || req->contract >= p->n_contracts || req->n_submitted < 0 ||
        req->n_submitted > MNC_MAX_SUBMITTED || (req->n_submitted && !req->submitted) ||
        (req->n_history && !req->history))
        return MNC_R_INVALID;
    const mnc_contract *c = &p->contracts[req->contract];
    if (c->family < 0 || c->family >= p->n_families)
        return MNC_R_INVALID;
    const mnc_family *fam = &p->families[c->family];

    for (int i = 0; i < fam->n_forms && out->n < MNC_MAX_CANDIDATES; i++) {
        mnc_scored *sc = &out->c[out->n++];
        memset(sc, 0, sizeof(*sc));
        const char *nm = fam->forms[i].name;
        mnc_str_cat(sc->name, sizeof(sc->name), &nm, 1); /* snprintf "%s", without printf */
        sc->index = i;
        sc->fields = fam->forms[i].fields;
        score(p, c, req, sc, NULL);
    }
    for (int i = 0; i < req->n_submitted && out->n < MNC_MAX_CANDIDATES; i++) {
        mnc_scored *sc = &out->c[out->n++];
        memset(sc, 0, sizeof(*sc));
        const char *nm = req->submitted[i].name;
        mnc_str_cat(sc->name, sizeof(sc->name), &nm, 1);
        sc->submitted = true;
        sc->index = i;
        sc->fields = req->submitted[i].fields;
        if (mnc_set_empty(&sc->fields)) {
            sc->verdict = MNC_R_INVALID;
            sc->risk = NAN;
            snprintf(sc->detail, sizeof(sc->detail), "submitted candidate declares no fields");
            continue;
        }
        score(p, c, req, sc, req->submitted[i].text ? req->submitted[i].text : "");
    }
    for (int i = 0; i < out->n; i++)
        if (out->c[i].verdict == MNC_OK && isfinite(out->c[i].risk) && out->c[i].risk >= 0 &&
            (out->chosen < 0 || ranks_before(&out->c[i], &out->c[out->chosen])))
            out->chosen = i;
    return out->chosen >= 0 ? MNC_OK : MNC_R_NO_CANDIDATE;
}
