"""Serving a viewer site: its folder, and the images beside it under `images/`.

Why Starlette's static files: the site is static by design (see `site`), so serving it is two
mounts; `contrastgen view` runs them alone and `contrastgen serve` adds them to the HTTP service
at /viewer, one page in both.
"""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

IMAGES = "images"  # the site-relative base of the images when the server serves them


def viewer_routes(site: str | os.PathLike[str], images: str | os.PathLike[str] | None) -> list[Mount]:
    """The mounts of one viewer: images first (a path inside the site's own folder would shadow them)."""
    routes = []
    if images is not None:
        routes.append(Mount(f"/{IMAGES}", app=StaticFiles(directory=str(images)), name="viewer-images"))
    routes.append(Mount("/", app=StaticFiles(directory=str(site), html=True), name="viewer-site"))
    return routes


def viewer_app(site: str | os.PathLike[str], images: str | os.PathLike[str] | None = None) -> Starlette:
    """The viewer on its own (`contrastgen view`)."""
    return Starlette(routes=viewer_routes(site, images))
