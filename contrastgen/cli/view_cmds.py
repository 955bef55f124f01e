"""`contrastgen view`: look at contrast sets in the browser, served locally or as a static site."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from contrastgen.api.settings import UnsafeBindError, is_loopback
from contrastgen.cli.options import no_progress_option
from contrastgen.files import scratch
from contrastgen.files.manifest import CAPTION_SET, artifact_kind
from contrastgen.viewer.app import IMAGES
from contrastgen.viewer.site import read_inputs, write_site


def register(group: click.Group) -> None:
    group.add_command(view_cmd)


def parse_named(values: tuple[str, ...]) -> dict[str, Path]:
    out = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"{value!r}: expected NAME=PATH", param_hint="--predictions")
        if name in out:
            raise click.BadParameter(f"model {name!r} given twice", param_hint="--predictions")
        out[name] = Path(path)
    return out


def images_base(images: str | None, *, served: bool) -> tuple[str | None, Path | None]:
    """(the base the page loads images from, the folder a server must serve) for --images."""
    if images is None:
        return None, None
    if "://" in images:
        return images, None
    folder = Path(images)
    if not folder.is_dir():
        raise click.BadParameter(f"{images}: not a folder or a URL", param_hint="--images")
    return (IMAGES, folder) if served else (folder.resolve().as_uri(), None)


def build_site(out_dir: Path, site: Path, *, scene_graphs: Path | None, predictions: tuple[str, ...],
               review: Path | None, images: str | None, served: bool, progress: bool = False) -> tuple[Path, Path | None]:
    """Write the viewer of OUT_DIR to `site`; returns its index.html and the images folder a
    server must serve (None for a static site or images at a URL). `progress`: a bar on a terminal
    while the contrast sets' pages are built."""
    base, folder = images_base(images, served=served)
    if artifact_kind(out_dir) == CAPTION_SET:  # a `captions generate` output: captions, negatives, their proofs
        from contrastgen.viewer.captions import write_caption_site

        return write_caption_site(out_dir, site, images=base), folder
    local = Path(images) if images is not None and "://" not in images else None
    index = write_site(read_inputs(out_dir, scene_graphs=scene_graphs, predictions=parse_named(predictions),
                                   review=review, images=base, images_dir=local), site, progress=progress)
    return index, folder


@click.command("view")
@click.argument("out_dir", type=click.Path(exists=True, path_type=Path))
@click.option("--scene-graphs", type=click.Path(exists=True, path_type=Path),
              help="The scene graphs the sets were made from (GQA's file, or CLEVR scenes: a file or a "
                   "folder): boxes to draw (on the image, or alone).")
@click.option("--images", metavar="DIR_OR_URL", help="Where {image_id}.jpg|png are: a folder or a base URL.")
@click.option("--predictions", multiple=True, metavar="NAME=PATH",
              help="A model's predictions ({qid: answer} or GQA submission); repeat for several models.")
@click.option("--review", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="`contrastgen mturk ingest`'s review.jsonl: filter on what the crowd disagreed with.")
@click.option("--static", "static_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write a self-contained static site here instead of serving.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but loopback needs --insecure (the viewer has no login).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option("--insecure", is_flag=True,
              help="Serve beyond loopback: anyone who reaches the port sees the sets and the images.")
@no_progress_option
def view_cmd(out_dir: Path, scene_graphs: Path | None, images: str | None, predictions: tuple[str, ...],
             review: Path | None, static_dir: Path | None, host: str, port: int, insecure: bool,
             no_progress: bool) -> None:
    """Open OUT_DIR's contrast sets in the browser: image and evidence boxes, the perturbations
    with their changed words, the evidence in words, models' answers; filters and search.

    OUT_DIR may also be a `contrastgen captions generate` output: each true caption with its
    negatives and the facts that make each false (and the image with the caption's box)."""
    if static_dir is not None:
        index, _ = build_site(out_dir, static_dir, scene_graphs=scene_graphs, predictions=predictions,
                              review=review, images=images, served=False, progress=not no_progress)
        click.echo(f"wrote {static_dir} (open {index.resolve().as_uri()})")
        return
    if not is_loopback(host) and not insecure:
        raise UnsafeBindError(f"refusing to serve the viewer on {host}: it has no login, so anyone who "
                              "reaches that address would see the contrast sets and the images folder; "
                              "use 127.0.0.1 (and an SSH tunnel), or pass --insecure if the network is trusted")
    site = scratch.make_dir("view-") / "site"  # removed with the process's temporary folder
    _, folder = build_site(out_dir, site, scene_graphs=scene_graphs, predictions=predictions, review=review,
                           images=images, served=True, progress=not no_progress)
    serve_site(site, folder, host=host, port=port)


def serve_site(site: Path, images: Path | None, *, host: str, port: int) -> None:
    """Serve a built viewer until Ctrl-C, saying where once the port is bound (`--port 0`: the
    one the system chose). On loopback it answers only loopback `Host` names, as the tokenless
    service does: a page that rebinds its own name to 127.0.0.1 (DNS rebinding) would otherwise
    read the sets. Connections are held to the service's header and body deadlines."""
    import uvicorn  # only for serving

    from contrastgen.api.connection import deadline_protocol
    from contrastgen.api.guards import LoopbackHostsOnly
    from contrastgen.api.settings import Limits
    from contrastgen.viewer.app import viewer_app

    app = viewer_app(site, images)
    config = uvicorn.Config(LoopbackHostsOnly(app) if is_loopback(host) else app, host=host, port=port,
                            log_level="warning", http=deadline_protocol(Limits()))
    sock = config.bind_socket()
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"contrastgen view: http://{shown}:{sock.getsockname()[1]}/ (Ctrl-C stops)", err=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it stops
        uvicorn.Server(config).run(sockets=[sock])
