"""The five KoBEST tasks (Kim et al. 2022, 2.2-2.6; the reviews in 3.4): what a writer
writes, what the prompt gives, the label set, the release layout and the partial input of
the artifact review.

A *prompt* is one writing task: the fields the writer is given (a paragraph for BoolQ,
a homonym for WiC, a review sentence and a negated draft for SentiNeg) and the label the
item must have, assigned in turn so that the labels come out balanced (KoBEST balanced
its labels). The writer writes the task's ``written`` fields. The release record is
the task's ``layout`` fields plus ``label`` (an int, KoBEST's encoding).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.core.registry import Registry


@dataclass(frozen=True)
class KobestTask:
    """One KoBEST task.

    ``given``: prompt fields shown to the writer (and kept in the item); ``written``:
    the fields the writer writes; ``layout``: the release fields in order (``label``
    last, not listed); ``labels``: label value -> its meaning, shown to the writer;
    ``partial``: the item fields the artifact review's partial-input model sees, each
    tagged by position (``a1:`` for ``alternative_1``); ``checks``: the guideline checks
    (``pipelines.families.kobest.checks``) run on every written item; ``text``: the fields the
    near-duplicate review and the toxic-content detectors read."""

    name: str
    title: str
    section: str
    given: tuple[str, ...]
    written: tuple[str, ...]
    layout: tuple[str, ...]
    labels: dict[int, str]
    partial: tuple[str, ...]
    checks: tuple[str, ...]
    text: tuple[str, ...]
    guideline: str
    # the Hub's task category of its release (pipelines.export.hf_card)
    hub_category: str = "text-classification"


# KoBEST Table 1: |Train|, |Dev|, |Test| of each task as the paper prints them (BoolQ's
# "3.665" and SentiNeg's "3.649" are thousands separators, as the other rows show)
PAPER_SIZES = {
    "boolq": (3665, 700, 1404),
    "copa": (3076, 1000, 1000),
    "wic": (3318, 1260, 1260),
    "hellaswag": (2029, 500, 500),
    "sentineg": (3649, 400, 397),
}

KOBEST_TASKS: Registry[KobestTask] = Registry("KoBEST task", None, "KoBEST tasks")


def register(task: KobestTask) -> KobestTask:
    KOBEST_TASKS.add(task.name, task, task.title)
    return task


def kobest_task(name: str) -> KobestTask:
    return KOBEST_TASKS.get(name)


register(
    KobestTask(
        name="boolq",
        title="KB-BoolQ: yes/no questions on a Wikipedia paragraph",
        section="2.2",
        given=("paragraph",),
        written=("question",),
        layout=("paragraph", "question"),
        labels={0: "아니오 (False)", 1: "예 (True)"},
        partial=("question",),
        checks=("boolq_yes_no",),
        text=("question",),
        guideline="문단을 읽고 '예/아니오'로 답할 수 있는 질문을 쓰세요. 의문사(누구, 무엇, 언제, "
        "어디, 왜, 어떻게, 몇, 얼마)를 쓰지 말고 물음표로 끝내세요. 정답은 지정된 답이어야 합니다.",
    )
)
register(
    KobestTask(
        name="copa",
        title="KB-COPA: choice of plausible alternatives",
        section="2.3",
        given=("question",),
        written=("premise", "alternative_1", "alternative_2"),
        layout=("premise", "question", "alternative_1", "alternative_2"),
        labels={0: "대안 1", 1: "대안 2"},
        partial=("alternative_1", "alternative_2"),
        checks=(
            "copa_past_tense",
            "copa_subject",
            "copa_keyword",
            "copa_slang",
            "copa_proper_noun",
            "copa_same_kind",
        ),
        text=("premise", "alternative_1", "alternative_2"),
        guideline="전제와 두 대안을 과거 시제로, 주어를 넣어 쓰세요. 질문(원인/결과)에 맞는 정답 "
        "대안을 지정된 자리에 쓰고, 다른 대안은 그럴듯하지만 틀리게 쓰세요. 두 대안 모두 전제의 "
        "핵심어를 함께 쓰세요. 두 대안은 같은 영역(둘 다 상태이거나 둘 다 행동)으로 쓰고, "
        "고유명사, 속어, 군더더기 표현은 쓰지 마세요.",
        hub_category="multiple-choice",
    )
)
register(
    KobestTask(
        name="wic",
        title="KB-WiC: a homonym in two contexts, same sense or not",
        section="2.4",
        given=("word",),
        written=("context_1", "context_2"),
        layout=("word", "context_1", "context_2"),
        labels={0: "다른 뜻 (False)", 1: "같은 뜻 (True)"},
        partial=("word",),
        checks=("wic_target", "wic_dictionary", "wic_examples", "wic_homonym"),
        text=("context_1", "context_2"),
        guideline="주어진 단어(명사, 대명사, 수사, 의존명사)가 두 문장에 모두 그대로 들어가게 "
        "쓰세요. 지정된 답(같은 뜻/다른 뜻)이 되도록 쓰세요. 단어는 사전에 올라 있어야 하고, "
        "두 문장은 사전의 예문에서 가져오세요. '다른 뜻'은 동음이의어로만 쓰세요"
        "(다의어는 안 됩니다).",
    )
)
register(
    KobestTask(
        name="hellaswag",
        title="KB-HellaSwag: the ending of a context",
        section="2.5",
        given=("topic",),
        written=("context", "ending_1", "ending_2", "ending_3", "ending_4"),
        layout=("context", "ending_1", "ending_2", "ending_3", "ending_4"),
        labels={0: "결말 1", 1: "결말 2", 2: "결말 3", 3: "결말 4"},
        partial=("ending_1", "ending_2", "ending_3", "ending_4"),
        checks=("hellaswag_sentences",),
        text=("context", "ending_1", "ending_2", "ending_3", "ending_4"),
        guideline="주제에 맞는 문맥을 세 문장 이상 쓰고, 같은 주제의 결말 네 개를 쓰세요. 지정된 "
        "자리의 결말만 문맥에 이어지게 쓰세요.",
        hub_category="multiple-choice",
    )
)
register(
    KobestTask(
        name="sentineg",
        title="KB-SentiNeg: a review and its negation",
        section="2.6",
        given=("original", "draft"),
        written=("sentence",),
        layout=("sentence",),
        labels={0: "부정 (negative)", 1: "긍정 (positive)"},
        partial=("sentence",),
        checks=("sentineg_brand", "sentineg_negated"),
        text=("sentence",),
        guideline="원문의 감성이 반대가 되도록 부정문으로 고치세요: '안', '못', '-지 않다'를 "
        "넣거나 빼거나, 반의어로 바꾸세요. 초안을 고쳐 쓰세요. 상표명은 쓰지 마세요.",
    )
)


def label_of(task: KobestTask, value: object) -> int | None:
    """``value`` as one of the task's labels (an int), or None when it is not one."""
    try:
        label = int(str(value).strip())
    except ValueError:
        return None
    return label if label in task.labels else None
