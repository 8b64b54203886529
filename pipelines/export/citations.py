"""The papers' BibTeX that the Hub's cards of their rebuilt datasets cite
(``TaskKind.hub["citation"]``, :mod:`pipelines.export.hf_card`): one copy each, for the
families that share a paper (KLUE's kinds, JGLUE's)."""

KLUE_BIBTEX = """@article{park2021klue,
  title = {{KLUE}: Korean Language Understanding Evaluation},
  author = {Park, Sungjoon and Moon, Jihyung and Kim, Sungdong and Cho, Won Ik and
            Han, Jiyoon and Park, Jangwon and Song, Chisung and Kim, Junseong and others},
  journal = {arXiv preprint arXiv:2105.09680},
  year = {2021}
}"""

JGLUE_BIBTEX = """@inproceedings{kurihara-etal-2022-jglue,
  title = {{JGLUE}: {J}apanese General Language Understanding Evaluation},
  author = {Kurihara, Kentaro and Kawahara, Daisuke and Shibata, Tomohide},
  booktitle = {Proceedings of the Thirteenth Language Resources and Evaluation Conference},
  pages = {2957--2966},
  year = {2022},
  url = {https://aclanthology.org/2022.lrec-1.317}
}"""
