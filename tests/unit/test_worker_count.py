"""How many processes `serve` runs (`--workers`, proxy/cli.py `worker_count`)."""

from __future__ import annotations

import os

import pytest

from proxy.cli import build_parser, config_from_args, worker_count


def workers(*argv: str) -> int:
    args = build_parser().parse_args(list(argv))
    return worker_count(args, config_from_args(args))


def test_one_per_core_in_front_of_an_upstream():
    assert workers("serve", "--upstream", "bolt://db:7687") == len(os.sched_getaffinity(0))
    assert workers("serve", "--upstream", "bolt://db:7687", "--workers", "3") == 3


def test_the_embedded_database_and_the_demo_run_in_one_process():
    assert workers("serve") == 1
    assert workers("demo") == 1
    assert workers("serve", "--workers", "1") == 1


@pytest.mark.parametrize("argv", [("serve", "--workers", "2"), ("demo", "--workers", "4"),
                                  ("serve", "--upstream", "bolt://db:7687", "--workers", "0")])
def test_what_cannot_be_served_is_refused_with_the_reason(argv):
    with pytest.raises(SystemExit) as refused:
        workers(*argv)
    assert "--workers" in str(refused.value)


def test_the_environment_sets_it(monkeypatch):
    monkeypatch.setenv("CYPHER_PROXY_WORKERS", "5")
    assert workers("serve", "--upstream", "bolt://db:7687") == 5
