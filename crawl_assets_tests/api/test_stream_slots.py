"""A streamed file's slot is given back however its response ends: here the client leaves before the first
byte (issue 30, item 2), over a real socket to the app served by uvicorn, while the file is still being
prepared (the node is slowed by the fault proxy, so the client is gone before the answer starts); an
export's snapshot is closed too."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from crawl_assets_tests.api.conftest import auth, make_client, open_contexts
from crawl_assets_tests.es_node.fixtures import resource
from crawl_assets_tests.es_node.proxy import FaultProxy
from crawl_assets_tests.served import served


def _open_slots(state) -> int:  # noqa: ANN001
    return sum(state.streams._open.values())


def _wait(condition, seconds: float = 30) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("path", ["/v1/networks/reply?format=gexf", "/v1/exports/records?format=jsonl"])
def test_a_client_gone_before_the_first_byte_gives_its_slot_back(world, path: str) -> None:
    with FaultProxy(world.url) as proxy, resource(proxy.url, max_retries=0).get_client() as es:
        with make_client(world, es=es, streams_per_key=1) as client:
            state = client.app.state.api
            before = open_contexts(world.es)
            with served(client.app) as url:
                where = urlsplit(url)
                for _ in range(2):  # two clients in turn, each leaving while its file is prepared
                    proxy.faults.slow(1.0, n=1, path="_search")
                    sock = socket.create_connection((where.hostname, where.port))
                    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {where.netloc}\r\n"
                                 f"Authorization: {auth(world)['Authorization']}\r\n\r\n".encode())
                    assert _wait(lambda: _open_slots(state) == 1), "the request took its slot"
                    sock.close()  # before a byte of the answer arrived
                    assert _wait(lambda: _open_slots(state) == 0), "the slot of a client that left was given back"
                assert open_contexts(world.es) <= before, "and the export's snapshot was closed"
                again = httpx.get(url + "/v1/exports/records", params={"limit": 3}, headers=auth(world), timeout=60)
                assert again.status_code == 200, again.text[:300]
                assert len(again.content.splitlines()) == 4, "the key exports again: a header line and 3 records"
            assert proxy.stats["delayed"] == 2
