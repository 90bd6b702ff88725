# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""attackers - the attacker set for excess attacker accuracy, in the standard library only.

Each attacker is trained on one template group and tested on the other (2-fold cross-fitting:
the errand labels seen in training never appear in testing), once on the output view (Y + Z)
and once on the full view (Y + Z + internal channels T). ΔAcc = Acc(full) − Acc(output only).

  tfidf_nb   TF-IDF features, multinomial naive Bayes (alpha = 0.1)
  tfidf_lr   TF-IDF features, multinomial logistic regression (SGD, L2, fixed seed and epochs)
  bayes      likelihood attacker over the released structured (field, value) observations and
             the output (categorical naive Bayes with add-one smoothing)
  policy     policy-aware attacker: sees the candidate type released, delegation, abstention
             and the MNC-L spend bucket, plus the output

Intervals: cluster bootstrap over test clusters (errand labels), predictions held fixed.
"""
import math
import random
import re

TOKEN = re.compile(r"[a-z][a-z0-9']+")


def tokens(text):
    toks = TOKEN.findall(text.lower())
    return toks + ["%s_%s" % (a, b) for a, b in zip(toks, toks[1:])]


class Tfidf:
    def fit(self, docs):
        df = {}
        for d in docs:
            for t in set(tokens(d)):
                df[t] = df.get(t, 0) + 1
        n = len(docs)
        self.idf = {t: math.log((1 + n) / (1 + c)) + 1 for t, c in df.items()}
        return self

    def transform(self, doc):
        tf = {}
        for t in tokens(doc):
            if t in self.idf:
                tf[t] = tf.get(t, 0) + 1
        v = {t: (1 + math.log(c)) * self.idf[t] for t, c in tf.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}


def _argmax(scores, classes):
    # deterministic tie-break: class order
    best = None
    for c in classes:
        if best is None or scores[c] > scores[best] + 1e-12:
            best = c
    return best


class NB:
    """Multinomial NB over sparse non-negative feature dicts."""

    def __init__(self, alpha=0.1):
        self.alpha = alpha

    def fit(self, X, y, classes):
        self.classes = classes
        self.prior = {c: math.log((sum(1 for v in y if v == c) + 1) / (len(y) + len(classes)))
                      for c in classes}
        cnt = {c: {} for c in classes}
        tot = {c: 0.0 for c in classes}
        vocab = set()
        for x, c in zip(X, y):
            for t, v in x.items():
                cnt[c][t] = cnt[c].get(t, 0.0) + v
                tot[c] += v
                vocab.add(t)
        self.vocab = vocab
        V = len(vocab) or 1
        self.logp = {c: {t: math.log((cnt[c].get(t, 0.0) + self.alpha) / (tot[c] + self.alpha * V))
                         for t in vocab} for c in classes}
        return self

    def predict(self, x):
        s = {c: self.prior[c] + sum(v * self.logp[c][t] for t, v in x.items() if t in self.vocab)
             for c in self.classes}
        return _argmax(s, self.classes)


class LR:
    """Multinomial logistic regression, SGD with L2; deterministic."""

    def __init__(self, epochs=30, lr=0.5, l2=1e-3, seed=7):
        self.epochs, self.lr, self.l2, self.seed = epochs, lr, l2, seed

    def fit(self, X, y, classes):
        self.classes = classes
        self.w = {c: {} for c in classes}
        self.b = {c: 0.0 for c in classes}
        idx = list(range(len(X)))
        rng = random.Random(self.seed)
        for ep in range(self.epochs):
            rng.shuffle(idx)
            eta = self.lr / (1 + ep)
            for i in idx:
                p = self._proba(X[i])
                for c in classes:
                    g = p[c] - (1.0 if y[i] == c else 0.0)
                    w = self.w[c]
                    for t, v in X[i].items():
                        w[t] = w.get(t, 0.0) * (1 - eta * self.l2) - eta * g * v
                    self.b[c] -= eta * g
        return self

    def _proba(self, x):
        z = {c: self.b[c] + sum(self.w[c].get(t, 0.0) * v for t, v in x.items()) for c in self.classes}
        m = max(z.values())
        e = {c: math.exp(v - m) for c, v in z.items()}
        s = sum(e.values())
        return {c: v / s for c, v in e.items()}

    def predict(self, x):
        return _argmax(self._proba(x), self.classes)


def _cat(feats):
    return {f: 1.0 for f in feats}


def run_attackers(items, classes, seed=7):
    """items: dicts with label, fold, cluster, out_text, full_text, out_feats, full_feats,
    policy_feats. Returns {attacker: (correct_out list, correct_full list)} aligned to items."""
    res = {}
    folds = sorted(set(it["fold"] for it in items))
    for name in ("tfidf_nb", "tfidf_lr", "bayes", "policy"):
        co, cf = [None] * len(items), [None] * len(items)
        for test_fold in folds:
            tr = [i for i, it in enumerate(items) if it["fold"] != test_fold]
            te = [i for i, it in enumerate(items) if it["fold"] == test_fold]
            if not tr or not te:
                continue
            for view, store in (("out", co), ("full", cf)):
                if name.startswith("tfidf"):
                    key = view + "_text"
                    vec = Tfidf().fit([items[i][key] for i in tr])
                    Xtr = [vec.transform(items[i][key]) for i in tr]
                    Xte = [vec.transform(items[i][key]) for i in te]
                    model = NB(0.1) if name == "tfidf_nb" else LR(seed=seed)
                else:
                    key = "out_feats" if view == "out" else (
                        "full_feats" if name == "bayes" else "policy_feats")
                    Xtr = [_cat(items[i][key]) for i in tr]
                    Xte = [_cat(items[i][key]) for i in te]
                    model = NB(1.0)
                model.fit(Xtr, [items[i]["label"] for i in tr], classes)
                for i, x in zip(te, Xte):
                    store[i] = 1 if model.predict(x) == items[i]["label"] else 0
        res[name] = (co, cf)
    return res


def excess(res, items, n_boot=1000, seed=11):
    """Max over attackers of ΔAcc with a cluster-bootstrap 95% interval of that maximum."""
    def stat(idx):
        best, who = None, None
        for name, (co, cf) in res.items():
            sel = [i for i in idx if co[i] is not None]
            if not sel:
                continue
            d = (sum(cf[i] for i in sel) - sum(co[i] for i in sel)) / len(sel)
            if best is None or d > best + 1e-12:
                best, who = d, name
        return best if best is not None else 0.0, who

    allidx = list(range(len(items)))
    point, who = stat(allidx)
    clusters = {}
    for i, it in enumerate(items):
        clusters.setdefault(it["cluster"], []).append(i)
    keys = sorted(clusters)
    rng = random.Random(seed)
    boots = []
    for _ in range(n_boot):
        idx = []
        for _k in keys:
            idx.extend(clusters[keys[rng.randrange(len(keys))]])
        boots.append(stat(idx)[0])
    boots.sort()
    lo = boots[int(0.025 * (n_boot - 1))]
    hi = boots[int(0.975 * (n_boot - 1))]
    per = {}
    for name, (co, cf) in res.items():
        sel = [i for i in allidx if co[i] is not None]
        per[name] = (sum(co[i] for i in sel) / len(sel), sum(cf[i] for i in sel) / len(sel))
    return point, (lo, hi), who, per


def bootstrap_rate(values, clusters, n_boot=1000, seed=13):
    """Mean of 0/1 (or real) values with a cluster-bootstrap 95% interval."""
    if not values:
        return 0.0, (0.0, 0.0)
    groups = {}
    for v, c in zip(values, clusters):
        groups.setdefault(c, []).append(v)
    keys = sorted(groups)
    rng = random.Random(seed)
    boots = []
    for _ in range(n_boot):
        s = n = 0
        for _k in keys:
            g = groups[keys[rng.randrange(len(keys))]]
            s += sum(g)
            n += len(g)
        boots.append(s / n if n else 0.0)
    boots.sort()
    return sum(values) / len(values), (boots[int(0.025 * (n_boot - 1))], boots[int(0.975 * (n_boot - 1))])


def _max_delta(res, idx):
    best = None
    for co, cf in res.values():
        sel = [i for i in idx if co[i] is not None]
        if sel:
            d = (sum(cf[i] for i in sel) - sum(co[i] for i in sel)) / len(sel)
            best = d if best is None else max(best, d)
    return best if best is not None else 0.0


def paired_excess(res_a, res_b, items, n_boot=1000, seed=17):
    """Excess of policy a minus excess of policy b (each the maximum over attackers) on the same
    items, with a paired cluster-bootstrap 95% interval: every resample draws the same clusters
    for both policies, so what the scenarios have in common cancels. Predictions stay fixed
    (attackers are not refitted per resample); label_shuffle_control measures the refitting
    noise this leaves out."""
    allidx = list(range(len(items)))
    point = _max_delta(res_a, allidx) - _max_delta(res_b, allidx)
    clusters = {}
    for i, it in enumerate(items):
        clusters.setdefault(it["cluster"], []).append(i)
    keys = sorted(clusters)
    rng = random.Random(seed)
    boots = []
    for _ in range(n_boot):
        idx = []
        for _k in keys:
            idx.extend(clusters[keys[rng.randrange(len(keys))]])
        boots.append(_max_delta(res_a, idx) - _max_delta(res_b, idx))
    boots.sort()
    return point, (boots[int(0.025 * (n_boot - 1))], boots[int(0.975 * (n_boot - 1))])


def label_shuffle_control(items, classes, k=50, seed=23):
    """The null: the secret is shuffled across clusters (each errand label keeps one tier, the
    tiers are permuted among labels, so class frequencies stay), which makes it independent of
    everything the attackers see; the attackers are then refitted and scored as usual. Returns
    {"max": [excess (max over attackers) per shuffle], "per": {attacker: [ΔAcc per shuffle]}}.
    Its mean is the bias of the max-over-attackers statistic and its spread is the noise of a
    refitted excess on this many scenarios: differences inside it are not resolvable."""
    clusters = sorted({it["cluster"] for it in items})
    tier = {}
    for it in items:
        tier.setdefault(it["cluster"], it["label"])
    rng = random.Random(seed)
    out = {"max": [], "per": {}}
    for _ in range(k):
        perm = [tier[c] for c in clusters]
        rng.shuffle(perm)
        m = dict(zip(clusters, perm))
        shuffled = [dict(it, label=m[it["cluster"]]) for it in items]
        res = run_attackers(shuffled, classes)
        allidx = list(range(len(items)))
        out["max"].append(_max_delta(res, allidx))
        for name, r in res.items():
            out["per"].setdefault(name, []).append(_max_delta({name: r}, allidx))
    return out
