"""A local S3 for the tests: moto in server mode (a separate process on a free loopback port) speaking the S3
wire protocol to the real s3fs/aiobotocore/botocore clients the lake uses with ``CRAWL_LAKE=s3://…``.

The clients find it as they find any S3-compatible endpoint, through the standard variables
(``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``...), which child processes inherit: no code of ours knows it is
a stand-in."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crawl_assets_tests.es_node.node import free_port

BUCKET = "crawl-lake"


@dataclass
class S3Server:
    url: str
    proc: subprocess.Popen[bytes]

    @property
    def env(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": self.url, "AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}

    def client(self) -> Any:
        """A boto3 client of the server (to look at it apart from the lake's code)."""
        import boto3

        return boto3.client("s3", endpoint_url=self.url, aws_access_key_id="test-key",
                            aws_secret_access_key="test-secret", region_name="us-east-1")

    def keys(self, prefix: str) -> list[str]:
        """Every object key under ``s3://BUCKET/prefix``."""
        client = self.client()
        out: list[str] = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix.rstrip("/") + "/"):
            out += [obj["Key"] for obj in page.get("Contents", [])]
        return out


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    port = free_port()
    log = Path(tmp_path_factory.mktemp("moto")) / "moto.log"
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                stdout=err, stderr=subprocess.STDOUT)
    server = S3Server(f"http://127.0.0.1:{port}", proc)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{server.url}/moto-api/data.json", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto server did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.2)
        server.client().create_bucket(Bucket=BUCKET)
        yield server
    finally:
        proc.kill()  # its objects are in memory only: nothing to shut down cleanly
        proc.wait()


@pytest.fixture
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The S3 server's variables in this test's environment (and its child processes')."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    return s3_server


@pytest.fixture
def s3_lake(s3_env: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """``CRAWL_LAKE`` set to a fresh prefix of the bucket; its URL."""
    url = f"s3://{BUCKET}/lake-{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("CRAWL_LAKE", url)
    return url


def s3_prefix(url: str) -> str:
    return url.removeprefix(f"s3://{BUCKET}/")

