"""The CPU detector: character n-gram TF-IDF, a linear SVM and calibrated probabilities.

KLUE 2.3 drops a sentence a gender-bias detector scores 0.5 or more and a hate-speech
detector 0.9 or more. Those thresholds are probabilities, so the scores must be ones:
this detector's are calibrated. It is

1. character 1-4-gram TF-IDF (sublinear term frequency, n-grams seen in at least two
   training comments; scikit-learn's ``TfidfVectorizer``),
2. a linear SVM on it (``LinearSVC``, C=0.3: of C in 0.1, 0.3 and 1, the best 5-fold
   cross-validated macro-F1 of the whole calibrated detector on the training data,
   averaged over the three tasks; ``benchmarks/classify.py`` prints the grid), and
3. a multinomial logistic regression from the SVM's decision values to probabilities,
   fitted on out-of-fold decision values of a 5-fold cross-validation on the training
   data (stacked calibration; Platt scaling for a binary task), so that it never sees
   a decision value of a comment the SVM was trained on.

It is stored without pickle, as ``detector.json`` (task, labels, language, settings,
dev metrics), ``vocabulary.json`` (n-gram -> column) and ``weights.npz`` (idf, SVM and
calibration weights); :class:`NgramDetector` loads it back into the same scikit-learn
vectorizer and gives the same probabilities (tested against the fitted estimators). It
has :class:`pipelines.models.classifier.SequenceClassifier`'s interface
(``labels``, ``label_index``, ``predict_proba``), so the filter takes either.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import write_json, write_text
from pipelines.models.classifier_data import DEFAULT_DATA, TASKS, TrainingDataError, load_split

MANIFEST = "detector.json"
KIND = "char-ngram-svm"


class NgramDetectorError(BenchforgeError, RuntimeError):
    """A detector folder that cannot be used; the message names it and the problem."""


@dataclass(frozen=True)
class NgramSettings:
    """The detector's settings; the defaults are the ones measured in
    ``docs/benchmarks.md`` (Detectors)."""

    ngram_min: int = 1
    ngram_max: int = 4
    min_df: int = 2
    sublinear_tf: bool = True
    C: float = 0.3  # noqa: N815 - scikit-learn's name
    calibration_folds: int = 5
    seed: int = 0
    language: str = "ko"  # the language of the training data (Korean HateSpeech)


def is_ngram_detector(path: str | Path) -> bool:
    """Whether ``path`` is a folder this module wrote (it holds ``detector.json``)."""
    return (Path(path) / MANIFEST).is_file()


def _vectorizer(settings: NgramSettings):  # noqa: ANN202 - scikit-learn's TfidfVectorizer
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        analyzer="char",
        ngram_range=(settings.ngram_min, settings.ngram_max),
        min_df=settings.min_df,
        sublinear_tf=settings.sublinear_tf,
        dtype=np.float64,
    )


def calibrated_probabilities(
    decision: np.ndarray, coef: np.ndarray, intercept: np.ndarray
) -> np.ndarray:
    """Class probabilities from SVM decision values (``n x 1`` for a binary task, else
    ``n x k``) through the calibration's logistic regression (``coef``, ``intercept``
    as scikit-learn's ``LogisticRegression`` holds them)."""
    z = decision @ coef.T + intercept
    if z.shape[1] == 1:  # binary: P(second class) = sigmoid(z)
        p1 = 1.0 / (1.0 + np.exp(-z[:, 0]))
        return np.column_stack([1.0 - p1, p1])
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class FittedDetector:
    """The fitted parts (vectorizer, SVM weights, calibration) and their probabilities."""

    def __init__(self, vectorizer, svm_coef: np.ndarray, svm_intercept: np.ndarray,  # noqa: ANN001
                 cal_coef: np.ndarray, cal_intercept: np.ndarray) -> None:  # fmt: skip
        self.vectorizer = vectorizer
        self.svm_coef, self.svm_intercept = svm_coef, svm_intercept
        self.cal_coef, self.cal_intercept = cal_coef, cal_intercept

    def proba_from_features(self, x) -> np.ndarray:  # noqa: ANN001 - a scipy sparse matrix
        """Calibrated probabilities from the vectorizer's features ``x``."""
        decision = np.asarray(x @ self.svm_coef.T) + self.svm_intercept
        return calibrated_probabilities(decision, self.cal_coef, self.cal_intercept)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.proba_from_features(self.vectorizer.transform(list(texts)))


def fit_detector(
    texts: Sequence[str], labels: Sequence[str], names: Sequence[str], settings: NgramSettings
) -> FittedDetector:
    """Fit the vectorizer and the SVM on ``texts``, and the calibration on the SVM's
    out-of-fold decision values (see the module docstring); ``names``: the label order."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.svm import LinearSVC

    y = np.array([names.index(v) for v in labels])
    if len(set(y.tolist())) < 2:
        raise TrainingDataError(f"only one label among {len(y)} training comments: {set(labels)}")
    vectorizer = _vectorizer(settings)
    x = vectorizer.fit_transform(list(texts))
    svm = LinearSVC(C=settings.C, random_state=settings.seed)
    folds = StratifiedKFold(settings.calibration_folds, shuffle=True, random_state=settings.seed)
    oof = cross_val_predict(svm, x, y, cv=folds, method="decision_function")
    svm.fit(x, y)
    oof = oof.reshape(len(y), -1)
    # C=1e4: next to no shrinkage on 1-3 features (plain Platt/multinomial scaling)
    calibration = LogisticRegression(C=1e4, max_iter=5000).fit(oof, y)
    svm_coef = svm.coef_.astype(np.float64)
    svm_intercept = np.atleast_1d(svm.intercept_).astype(np.float64)
    return FittedDetector(vectorizer, svm_coef, svm_intercept,
                          calibration.coef_.astype(np.float64),
                          calibration.intercept_.astype(np.float64))  # fmt: skip


def reliability(scores: np.ndarray, positive: np.ndarray, bins: int = 10) -> dict:
    """The reliability curve of positive-class scores on labeled data: per equal-width
    bin the count, mean score and observed positive rate, and the expected calibration
    error (count-weighted mean gap between the two)."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(scores, edges[1:-1]), 0, bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        mask = which == b
        n = int(mask.sum())
        mean = float(scores[mask].mean()) if n else None
        rate = float(positive[mask].mean()) if n else None
        if n:
            ece += n / len(scores) * abs(mean - rate)
        rows.append({"bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "n": n,
                     "mean_score": None if mean is None else round(mean, 4),
                     "positive_rate": None if rate is None else round(rate, 4)})  # fmt: skip
    return {"ece": round(ece, 4), "bins": rows}


def train_ngram_detector(
    task: str, out: Path, data_dir: Path = DEFAULT_DATA, settings: NgramSettings | None = None
) -> dict:
    """Train, evaluate (dev macro-F1, per-class F1, reliability of the positive score)
    and save one detector into ``out`` (created; files written atomically, the manifest
    last); return its metrics."""
    from pipelines.models.collapse import collapse_report
    from pipelines.models.train_classifier import evaluate

    if task not in TASKS:
        raise TrainingDataError(f"unknown task {task!r}; expected one of {sorted(TASKS)}")
    settings = settings or NgramSettings()
    spec = TASKS[task]
    names = spec["labels"]
    train_texts, train_labels = load_split(data_dir / "train.tsv", task)
    dev_texts, dev_labels = load_split(data_dir / "dev.tsv", task)
    start = time.perf_counter()
    fitted = fit_detector(train_texts, train_labels, names, settings)
    seconds = time.perf_counter() - start
    probs = fitted.predict_proba(dev_texts)
    y_dev = [names.index(v) for v in dev_labels]
    pos = [names.index(p) for p in spec["positive"]]
    dev = evaluate(probs, y_dev, names, spec["positive"])
    positive = np.isin(np.array(y_dev), pos).astype(float)
    metrics = {
        "task": task,
        "kind": KIND,
        "labels": names,
        "language": settings.language,
        "settings": asdict(settings),
        "train_seconds": round(seconds, 2),
        "vocabulary": len(fitted.vectorizer.vocabulary_),
        "train_examples": len(train_texts),
        "dev": dev,
        "reliability": reliability(probs[:, pos].sum(axis=1), positive),
        "collapse": collapse_report(probs.argmax(axis=1), y_dev, names, 0.98),
        "data": {"train": (data_dir / "train.tsv").name, "dev": (data_dir / "dev.tsv").name},
    }
    save(fitted, metrics, out)
    return metrics


def save(fitted: FittedDetector, metrics: dict, out: Path) -> None:
    """Write the detector into ``out``: weights and vocabulary first, the manifest last
    (a folder without ``detector.json`` is not a detector)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)
    vocab = {k: int(v) for k, v in fitted.vectorizer.vocabulary_.items()}
    write_text(json.dumps(vocab, ensure_ascii=False, sort_keys=True), out / "vocabulary.json")
    tmp = out / "weights.tmp.npz"
    np.savez(tmp, idf=fitted.vectorizer.idf_, svm_coef=fitted.svm_coef,
             svm_intercept=fitted.svm_intercept, cal_coef=fitted.cal_coef,
             cal_intercept=fitted.cal_intercept)  # fmt: skip
    tmp.replace(out / "weights.npz")
    write_text(model_card(metrics), out / "README.md")
    write_json(metrics, out / MANIFEST)


def model_card(metrics: dict) -> str:
    """The detector's README: what it is, its data, its dev figures and calibration."""
    dev, rel = metrics["dev"], metrics["reliability"]
    per_class = ", ".join(f"{k} {v}" for k, v in dev["per_class_f1"].items())
    s = metrics["settings"]
    return f"""# {metrics["task"]} detector (character n-gram SVM, calibrated)

Trained by benchforge on the shipped Korean HateSpeech data (Moon et al. 2020, CC BY-SA
4.0; `{metrics["data"]["train"]}` {metrics["train_examples"]} comments, evaluated on
`{metrics["data"]["dev"]}`) for KLUE 2.3's toxic-content filter. Character
{s["ngram_min"]}-{s["ngram_max"]}-gram TF-IDF ({metrics["vocabulary"]} n-grams), a linear
SVM (C={s["C"]}) and probabilities calibrated on {s["calibration_folds"]}-fold
out-of-fold decision values (`pipelines/models/ngram_detector.py`).

- Labels: {", ".join(metrics["labels"])}; the filter's score is the probability of
  {", ".join(dev["positive_labels"])}.
- Dev macro-F1 {dev["macro_f1"]} ({per_class}), {dev["examples"]} comments.
- Calibration on dev: expected calibration error {rel["ece"]} over 10 bins.
- Language: {metrics["language"]}. Trained in {metrics["train_seconds"]} s.

Limits: trained on entertainment-news comments; KLUE 2.3 found such detectors do not
work well on formal news text. The dev set is small (471 comments), so the figures
carry a few points of sampling error.
"""


class NgramDetector:
    """A saved detector folder (see the module docstring), with the filter's interface."""

    def __init__(self, path: str | Path, label_map: dict[str, str] | None = None) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: F401 - early error

        self.path = Path(path).resolve()
        if not is_ngram_detector(self.path):
            raise NgramDetectorError(f"{self.path}: not a detector folder (no {MANIFEST})")
        try:
            self.metrics = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
            vocab = json.loads((self.path / "vocabulary.json").read_text(encoding="utf-8"))
            with np.load(self.path / "weights.npz") as w:
                arrays = {k: w[k] for k in w.files}
            settings = NgramSettings(**self.metrics["settings"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise NgramDetectorError(f"{self.path}: unreadable detector ({exc})") from exc
        collapse = self.metrics.get("collapse") or {}
        if collapse.get("collapsed"):
            raise NgramDetectorError(
                f"{self.path}: this detector collapsed in training ({collapse.get('summary')}); "
                "it is not used as a filter"
            )
        vectorizer = _vectorizer(settings)
        vectorizer.vocabulary_ = vocab
        vectorizer.idf_ = arrays["idf"]
        self.fitted = FittedDetector(vectorizer, arrays["svm_coef"], arrays["svm_intercept"],
                                     arrays["cal_coef"], arrays["cal_intercept"])  # fmt: skip
        mapping = label_map or {}
        self.labels = [mapping.get(n, n) for n in self.metrics["labels"]]
        self.language = self.metrics.get("language")
        # detectors trained on the same comments with the same settings share their
        # n-gram features: ``predict_many`` computes them once for all of them
        digest = hashlib.sha256((self.path / "vocabulary.json").read_bytes())
        digest.update(json.dumps(self.metrics["settings"], sort_keys=True).encode())
        digest.update(np.ascontiguousarray(arrays["idf"]).tobytes())
        self.features_key = digest.hexdigest()

    def label_index(self, names: Sequence[str]) -> list[int]:
        """Positions of ``names`` among the labels; a clear error for an unknown one."""
        missing = [n for n in names if n not in self.labels]
        if missing:
            raise NgramDetectorError(
                f"{self.path}: no label {missing} among the detector's labels {self.labels}"
            )
        return [self.labels.index(n) for n in names]

    def predict_proba(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Calibrated class probabilities, one row per text in input order."""
        return predict_many({"one": self}, texts)["one"]


CHUNK = 50_000  # texts whose sparse features are held at once (bounded memory)


def predict_many(
    detectors: dict[str, NgramDetector], texts: Sequence[str]
) -> dict[str, np.ndarray]:
    """Each detector's calibrated probabilities for ``texts`` (name -> one row per text),
    ``CHUNK`` texts at a time; detectors with the same vectorizer (``features_key``)
    share one transform of each chunk."""
    out = {name: np.zeros((len(texts), len(d.labels))) for name, d in detectors.items()}
    for start in range(0, len(texts), CHUNK):
        part = list(texts[start : start + CHUNK])
        features: dict[str, object] = {}
        for name, det in detectors.items():
            if det.features_key not in features:
                features[det.features_key] = det.fitted.vectorizer.transform(part)
            out[name][start : start + len(part)] = det.fitted.proba_from_features(
                features[det.features_key]
            )
    return out
