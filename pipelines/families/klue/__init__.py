"""KLUE (Park et al. 2021): the ``klue-sts`` (:mod:`.sts`), ``klue-ner`` (:mod:`.ner`,
its recipe section :mod:`.ner_section`, the KMOU corpus read by :mod:`.kmou`, the
release layout by :mod:`.ner_layout`), ``klue-re`` (:mod:`.relations`, its recipe
section :mod:`.re_section`, the 30 classes in ``re_relations.json``), ``klue-nli``
(:mod:`.nli`, premises chosen by :mod:`.nli_premises`; the ``items:`` section and
the premise rules in :mod:`.items_section`), ``klue-ynat`` (:mod:`.ynat`) and
``klue-dp`` (:mod:`.dp`: its recipe section :mod:`.dp_section`, the release
layout and errata checks :mod:`.dp_layout`, the UD reader :mod:`.ud`, the conversion to
KLUE's conventions :mod:`.dp_convert`, MeCab's morphology :mod:`.dp_morph`, the
pseudo-parser :mod:`.dp_parse`) task kinds, each registered by its module;
:mod:`.sampling` draws their stratified samples; :mod:`.review_section` is the linguists' review
round NER and DP share; :mod:`.answer_rows` reads the answer
and report rows NER and DP gold steps share."""

from pipelines.families.klue import dp, items_section, ner, nli, relations, sts, ynat  # noqa: F401
