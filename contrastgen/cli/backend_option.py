"""`--backend local|ray` and `--address`: where a command's heavy work runs, said the same way by
every command that has such work (generate, augment, ood vqavs)."""

from __future__ import annotations

import click

from contrastgen.errors import require_extra
from contrastgen.parallel.backend import BACKENDS, Backend
from contrastgen.parallel.ray_address import CONNECT_TIMEOUT_S, check_reachable

_OPTIONS = [
    click.option("--backend", type=click.Choice(BACKENDS), default="local", show_default=True,
                 help="local: this machine's worker processes; ray: tasks on a Ray cluster (pip install "
                      "'contrastgen[ray]'). The output is the same."),
    click.option("--address", metavar="auto|HOST:PORT|ray://HOST:PORT",
                 help="The Ray cluster (with --backend ray); without it, a Ray instance on this machine (its "
                      f"session folder removed at the end). A HOST:PORT where nothing answers within "
                      f"{CONNECT_TIMEOUT_S:g} s ends the run before it reads any input."),
]


def backend_option(fn):
    for option in reversed(_OPTIONS):
        fn = option(fn)
    return fn


def backend_from(name: str, address: str | None) -> Backend:
    if address and name != "ray":
        raise click.BadParameter("--address needs --backend ray", param_hint="--address")
    if name == "ray":  # before any input is read: a run should not stop for this halfway
        require_extra("ray", ("ray",), "--backend ray")
        check_reachable(address)
    return Backend(name, address)
