"""`contrastgen serve`: the HTTP service (FastAPI under uvicorn).

The service itself lives in `contrastgen.api`; this module only turns options into `Settings`.
Authentication: set `CONTRASTGEN_API_TOKEN` to require `Authorization: Bearer <token>` on the
`/v1` endpoints. A bind beyond loopback without a token is refused unless `--insecure` is given.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from contrastgen.api.settings import MIB, TOKEN_ENV, Limits, Settings
from contrastgen.cli.options import FiniteRange
from contrastgen.files import scratch

_DEFAULTS = Limits()


def register(group: click.Group) -> None:
    group.add_command(serve_cmd)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but loopback needs a token or --insecure.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to bind (0 picks a free one and logs it).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="uvicorn worker processes, each with its own engine.")
@click.option("--scene-graphs", "scene_graphs", type=click.Path(exists=True, path_type=Path),
              help="A corpus of GQA scene graphs, read once at start-up, for distractor statistics.")
@click.option("--insecure", is_flag=True,
              help=f"Allow a non-loopback bind without {TOKEN_ENV} (trusted networks only).")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="Allow browser calls from ORIGIN (repeatable); CORS is off without it.")
@click.option("--max-body-mib", default=_DEFAULTS.max_body_bytes // MIB, show_default=True,
              type=click.IntRange(min=1), help="Largest request body (413 above).")
@click.option("--max-objects", default=_DEFAULTS.max_objects_per_graph, show_default=True,
              type=click.IntRange(min=1), help="Most objects in one scene graph (413 above).")
@click.option("--max-batch", default=_DEFAULTS.max_questions_per_batch, show_default=True,
              type=click.IntRange(min=1), help="Most questions in one batch (413 above).")
@click.option("--timeout", default=_DEFAULTS.request_timeout_s, show_default=True,
              type=FiniteRange(min=0.01), help="Seconds one request may run (504 beyond).")
@click.option("--header-timeout", default=_DEFAULTS.header_timeout_s, show_default=True,
              type=FiniteRange(min=0.01),
              help="Seconds a request's headers may take to arrive (408 and the connection closed beyond).")
@click.option("--body-timeout", default=_DEFAULTS.body_timeout_s, show_default=True,
              type=FiniteRange(min=0.01),
              help="Seconds a whole request body may take to arrive after its headers (408 beyond).")
@click.option("--max-question-chars", default=_DEFAULTS.max_question_chars, show_default=True,
              type=click.IntRange(min=1), help="Longest question text (413 above).")
@click.option("--threads", default=_DEFAULTS.worker_threads, show_default=True,
              type=click.IntRange(min=1), help="Worker threads per process for engine calls.")
@click.option("--max-pending", default=_DEFAULTS.max_pending, show_default=True,
              type=click.IntRange(min=1), help="Requests that may wait for a thread (503 beyond).")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
@click.option("--viewer", "viewer_out", type=click.Path(exists=True, path_type=Path),
              help="Also serve this output directory's contrast-set viewer at /viewer.")
@click.option("--viewer-scene-graphs", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The viewer's scene graphs (boxes to draw).")
@click.option("--viewer-images", metavar="DIR_OR_URL", help="The viewer's images: a folder or a base URL.")
@click.option("--viewer-predictions", multiple=True, metavar="NAME=PATH", help="Models' predictions for the viewer.")
def serve_cmd(host: str, port: int, workers: int, scene_graphs: Path | None, insecure: bool,
              cors_origins: tuple[str, ...], max_body_mib: int, max_objects: int, max_batch: int,
              timeout: float, header_timeout: float, body_timeout: float, max_question_chars: int, threads: int,
              max_pending: int, log_level: str, viewer_out: Path | None,
              viewer_scene_graphs: Path | None, viewer_images: str | None,
              viewer_predictions: tuple[str, ...]) -> None:
    """Serve perturb, verify and evaluate over HTTP; the OpenAPI page is at /docs.

    Logs are JSON lines on stderr, one per request. Stop with Ctrl-C.
    """
    from contrastgen.api.server import serve  # FastAPI and uvicorn only load for this command

    limits = Limits(max_body_bytes=max_body_mib * MIB, max_objects_per_graph=max_objects,
                    max_questions_per_batch=max_batch, request_timeout_s=timeout,
                    header_timeout_s=header_timeout, body_timeout_s=body_timeout,
                    max_question_chars=max_question_chars,
                    worker_threads=threads, max_pending=max_pending)
    site = images_folder = None
    if viewer_out is not None:  # built once here; every worker process serves the same folder
        from contrastgen.cli.view_cmds import build_site

        site = scratch.make_dir("viewer-") / "site"  # removed with the process's temporary folder
        _, images_folder = build_site(viewer_out, site, scene_graphs=viewer_scene_graphs,
                                      predictions=viewer_predictions, review=None, images=viewer_images,
                                      served=True)
    settings = Settings(host=host, port=port, workers=workers,
                        scene_graphs=str(scene_graphs) if scene_graphs else None,
                        viewer_site=str(site) if site else None,
                        viewer_images=str(images_folder) if images_folder else None,
                        insecure=insecure, cors_origins=cors_origins, limits=limits,
                        token=os.environ.get(TOKEN_ENV) or None)
    if port:
        shown = f"[{host}]" if ":" in host else host
        click.echo(f"contrastgen serve: http://{shown}:{port} (OpenAPI page: http://{shown}:{port}/docs)",
                   err=True)
    serve(settings, log_level=log_level)
