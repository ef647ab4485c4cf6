"""``python -m crawl_assets_tests.es_node``: start a real test node, print its URL, serve until Ctrl-C or
SIGTERM (then stop it). For benches and manual tries: ``CRAWL_ES_URL=<url> crawl-assets es setup``."""

from __future__ import annotations

import signal
import sys

from crawl_assets_tests.es_node.distribution import Unavailable
from crawl_assets_tests.es_node.node import NodeStartError, RealNode


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        with RealNode() as node:
            print(node.url, flush=True)
            signal.pause()
    except (Unavailable, NodeStartError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
