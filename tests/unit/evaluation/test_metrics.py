"""The papers' metrics against the reference implementations: scikit-learn, numpy's
correlations, seqeval's entity report, KLUE's RE scripts and the SQuAD v1.1 evaluation
script (its functions copied below as published)."""

from __future__ import annotations

import re
import string
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, auc, f1_score, precision_recall_curve

from pipelines.evaluation.metrics import METRICS

rng = np.random.default_rng(7)


def m(name, gold, pred, probs=None, labels=None):
    return METRICS.get(name).fn(gold, pred, probs, labels)


# -- the SQuAD v1.1 script (Rajpurkar et al. 2016), as published -----------------------


def squad_normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def squad_f1_score(prediction, ground_truth):
    prediction_tokens = squad_normalize_answer(prediction).split()
    ground_truth_tokens = squad_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_exact_match_score(prediction, ground_truth):
    return squad_normalize_answer(prediction) == squad_normalize_answer(ground_truth)


def squad_max_over_ground_truths(metric_fn, prediction, ground_truths):
    return max(metric_fn(prediction, gt) for gt in ground_truths)


# -- classes ---------------------------------------------------------------------------


def test_accuracy_and_macro_f1_match_scikit_learn():
    for _ in range(6):
        gold = rng.choice(["politics", "economy", "world", "sports"], 80).tolist()
        pred = rng.choice(["politics", "economy", "world", "sports", "it"], 80).tolist()
        assert m("accuracy", gold, pred) == pytest.approx(100 * accuracy_score(gold, pred))
        assert m("macro_f1", gold, pred) == pytest.approx(
            100 * f1_score(gold, pred, average="macro", zero_division=0)
        )


def test_macro_f1_by_hand():
    # class a: P 1/2 R 1 F 2/3; class b: P 1 R 1/2 F 2/3 -> 66.67
    assert m("macro_f1", ["a", "b", "b"], ["a", "a", "b"]) == pytest.approx(200 / 3)


def test_correlations_match_numpy_and_ranks():
    for _ in range(5):
        gold = rng.uniform(0, 5, 50)
        pred = gold + rng.normal(0, 1.2, 50)
        assert m("pearson", gold, pred) == pytest.approx(100 * np.corrcoef(gold, pred)[0, 1])
        ranks = [np.argsort(np.argsort(v)) for v in (gold, pred)]  # no ties in floats
        assert m("spearman", gold, pred) == pytest.approx(100 * np.corrcoef(*ranks)[0, 1])
    assert np.isnan(m("pearson", [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]))  # constant: undefined


def test_sts_f1_binarises_at_three_point_zero():
    """KLUE 3.2.2: 3.0 is a paraphrase, 2.99 is not."""
    gold = [3.0, 2.99, 4.5, 0.2]
    assert m("f1_at_3", gold, [3.0, 2.99, 4.0, 1.0]) == 100.0
    # predicting 2.99 for the 3.0 pair misses it: P 1, R 1/2 -> F1 2/3
    assert m("f1_at_3", gold, [2.99, 2.99, 4.0, 1.0]) == pytest.approx(200 / 3)
    g, p = rng.uniform(0, 5, 60), rng.uniform(0, 5, 60)
    assert m("f1_at_3", g, p) == pytest.approx(100 * f1_score(g >= 3.0, p >= 3.0))


# -- spans -----------------------------------------------------------------------------


def test_entity_macro_f1_is_strict_and_matches_seqeval_report():
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    gold = [["B-PS", "I-PS", "O", "B-LC", "I-LC", "O", "B-DT"]]
    # PS right; LC one character short (strict: wrong); DT right; a false OG
    pred = [["B-PS", "I-PS", "O", "B-LC", "O", "B-OG", "B-DT"]]
    report = classification_report(gold, pred, mode="strict", scheme=IOB2, output_dict=True,
                                   zero_division=0)  # fmt: skip
    assert m("entity_macro_f1", gold, pred) == pytest.approx(100 * report["macro avg"]["f1-score"])
    # PS 1, DT 1, LC 0, OG 0 -> 50
    assert m("entity_macro_f1", gold, pred) == pytest.approx(50.0)


KLUE_CHAR_CLASSES = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI",
                     "I-TI", "B-QT", "I-QT"]  # KLUE 3.4.2, O excluded  # fmt: skip


def test_entity_and_char_f1_on_klues_own_example():
    """KLUE 3.4.2's example: gold [B-PS, I-PS, O, O, B-OG, I-OG], prediction [B-PS, I-PS,
    I-PS, O, B-OG, I-OG]: "For entity type PS, F1 score is 0 ... in case of OG, a model
    gets a score" (entity macro-F1 (0 + 1) / 2). Char F1 over the 12 classes, O excluded:
    B-PS 1, I-PS 2/3 (one false I-PS), B-OG 1, I-OG 1, and the 8 classes neither side
    has score 1 (KLUE's released script: zero_division=1) -> (3 + 2/3 + 8) / 12."""
    gold = [["B-PS", "I-PS", "O", "O", "B-OG", "I-OG"]]
    pred = [["B-PS", "I-PS", "I-PS", "O", "B-OG", "I-OG"]]
    assert m("entity_macro_f1", gold, pred) == pytest.approx(50.0)
    assert m("char_macro_f1", gold, pred) == pytest.approx(100 * (3 + 2 / 3 + 8) / 12)


def test_char_macro_f1_averages_klues_12_classes_without_o():
    """By hand: B-PS 1; I-PS tp 1 fp 1 -> 2/3; B-LC 1; I-LC missed -> 0; B-OG false -> 0;
    B-DT 1; I-OG, I-DT, B-TI, I-TI, B-QT, I-QT on neither side -> 1 each. O (no
    character right: 0 here) is not a class (KLUE 3.4.2: "We exclude the majority
    negative entity class (O)")."""
    gold = [["B-PS", "I-PS", "O", "B-LC", "I-LC", "O"], ["B-DT"]]
    pred = [["B-PS", "I-PS", "I-PS", "B-LC", "O", "B-OG"], ["B-DT"]]
    want = (1 + 2 / 3 + 1 + 0 + 0 + 1 + 6) / 12
    assert m("char_macro_f1", gold, pred) == pytest.approx(100 * want)
    flat_g, flat_p = sum(gold, []), sum(pred, [])
    assert m("char_macro_f1", gold, pred) == pytest.approx(
        100 * f1_score(flat_g, flat_p, labels=KLUE_CHAR_CLASSES, average="macro", zero_division=1)
    )
    # random tags: the same as scikit-learn over the 12 classes, O never counted
    tags = ["O", "B-PS", "I-PS", "B-LC", "I-LC", "B-QT"]
    gold = [rng.choice(tags, n).tolist() for n in (5, 9, 14)]
    pred = [rng.choice(tags, len(g)).tolist() for g in gold]
    flat_g, flat_p = sum(gold, []), sum(pred, [])
    assert m("char_macro_f1", gold, pred) == pytest.approx(
        100 * f1_score(flat_g, flat_p, labels=KLUE_CHAR_CLASSES, average="macro", zero_division=1)
    )
    # all O right counts for nothing: a prediction of nothing against one entity
    assert m("char_macro_f1", [["O", "B-TI", "O"]], [["O", "O", "O"]]) == pytest.approx(
        100 * 11 / 12
    )


# -- relations: KLUE's RE scripts ------------------------------------------------------


def klue_re_micro_f1(preds, labels, label_list):
    no_relation_label_idx = label_list.index("no_relation")
    label_indices = list(range(len(label_list)))
    label_indices.remove(no_relation_label_idx)
    return f1_score(labels, preds, average="micro", labels=label_indices) * 100.0


def klue_re_auprc(probs, labels, n):
    labels = np.eye(n)[labels]
    score = np.zeros((n,))
    for c in range(n):
        targets_c = labels.take([c], axis=1).ravel()
        preds_c = probs.take([c], axis=1).ravel()
        precision, recall, _ = precision_recall_curve(targets_c, preds_c)
        score[c] = auc(recall, precision)
    return np.average(score) * 100.0


def test_re_micro_f1_and_auprc_match_klues_scripts():
    names = ["no_relation", "org:founded", "per:origin", "per:title"]
    gold_i = rng.integers(0, 4, 120)
    gold_i[:4] = [0, 1, 2, 3]  # every class present, as KLUE's AUPRC assumes
    probs = rng.dirichlet(np.ones(4), 120)
    probs[np.arange(120), gold_i] += rng.uniform(0, 0.6, 120)  # better than chance
    pred_i = probs.argmax(axis=1)
    gold, pred = [names[i] for i in gold_i], [names[i] for i in pred_i]
    assert m("re_micro_f1", gold, pred, labels=names) == pytest.approx(
        klue_re_micro_f1(pred_i, gold_i, names)
    )
    assert m("auprc", gold, pred, probs, names) == pytest.approx(klue_re_auprc(probs, gold_i, 4))


def test_re_micro_f1_leaves_no_relation_out():
    # all three predicted no_relation: the one relation is missed, nothing right -> 0;
    # the two no_relation hits count for nothing
    assert m("re_micro_f1", ["no_relation", "no_relation", "per:title"],
             ["no_relation", "no_relation", "no_relation"]) == 0.0  # fmt: skip
    assert m("re_micro_f1", ["no_relation", "per:title"], ["no_relation", "per:title"]) == 100.0


# -- answers: the SQuAD script ---------------------------------------------------------


def test_exact_match_and_f1_match_the_squad_script_on_english():
    cases = [
        (["The Eiffel Tower", "Eiffel Tower"], "eiffel tower!"),
        (["in 1889"], "1889"),
        (["Paris, France"], "the city of Paris"),
        (["a red fox"], "fox"),
    ]
    for answers, pred in cases:
        em = squad_max_over_ground_truths(squad_exact_match_score, pred, answers)
        assert m("exact_match", [answers], [pred]) == pytest.approx(100 * em)


def _spaced(text: str) -> str:
    return " ".join(ch for ch in text if not ch.isspace())


def test_character_f1_is_the_squad_f1_with_characters_for_tokens():
    """JGLUE 3.3.1: JSQuAD's F1 counts characters. The SQuAD script's F1 over the texts
    written one character a token gives the same figure."""
    alphabet = list("東京都大阪府の北に南西町村駅前한국어서울부산은는")
    for _ in range(40):
        answers = ["".join(rng.choice(alphabet, rng.integers(1, 8))) for _ in range(2)]
        pred = "".join(rng.choice(alphabet, rng.integers(1, 8)))
        want = squad_max_over_ground_truths(
            squad_f1_score, _spaced(pred), [_spaced(a) for a in answers]
        )
        assert m("char_f1", [answers], [pred]) == pytest.approx(100 * want)


def test_answers_normalise_full_width_and_unicode_punctuation():
    assert m("exact_match", [["東京"]], ["東京。"]) == 100.0
    assert m("exact_match", [["ＡＢＣ"]], ["abc"]) == 100.0


def test_unanswerable_questions_score_an_empty_prediction():
    assert m("exact_match", [[], ["서울"]], ["", "서울"]) == 100.0
    assert m("char_f1", [[]], ["서울"]) == 0.0


def _longest_common_substring(a: str, b: str) -> int:
    return max((k for i in range(len(a)) for j in range(i + 1, len(a) + 1)
                if a[i:j] in b for k in [j - i]), default=0)  # fmt: skip


def test_rouge_w_is_the_f1_of_the_longest_common_consecutive_substring():
    """KLUE 3.7.2: ROUGE-W as the LCCS-based F1, checked by brute force."""
    alphabet = list("대한민국헌법제조항법원")
    for _ in range(40):
        gold = "".join(rng.choice(alphabet, rng.integers(1, 9)))
        pred = "".join(rng.choice(alphabet, rng.integers(1, 9)))
        k = _longest_common_substring(gold, pred)
        want = (
            0.0
            if k == 0
            else 2 * (k / len(pred)) * (k / len(gold)) / (k / len(pred) + k / len(gold))
        )
        assert m("rouge_w", [[gold]], [pred]) == pytest.approx(100 * want)
