"""``ensure_pool`` when a worker creates the pool between its read and its create."""

from __future__ import annotations

from types import SimpleNamespace

import prefect
import pytest
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

from flows.deploy import DeployError, ensure_pool


class _Racing:
    """A client whose pool appears (made by a worker) just after the first read."""

    def __init__(self, kind: str) -> None:
        self.kind, self.reads, self.creates = kind, 0, 0

    def __enter__(self) -> _Racing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read_work_pool(self, name: str) -> SimpleNamespace:
        self.reads += 1
        if self.reads == 1:
            raise ObjectNotFound(http_exc=Exception("404"))
        return SimpleNamespace(name=name, type=self.kind)

    def create_work_pool(self, pool: object) -> None:
        self.creates += 1
        raise ObjectAlreadyExists(http_exc=Exception("409"))


def test_a_pool_made_by_a_worker_meanwhile_is_used_not_an_error(monkeypatch) -> None:
    client = _Racing("process")
    monkeypatch.setattr(prefect, "get_client", lambda sync_client=True: client)
    assert ensure_pool("benchforge") is False
    assert (client.reads, client.creates) == (2, 1)


def test_a_pool_made_meanwhile_of_another_type_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(prefect, "get_client", lambda sync_client=True: _Racing("docker"))
    with pytest.raises(DeployError, match="of type 'docker'"):
        ensure_pool("benchforge")
