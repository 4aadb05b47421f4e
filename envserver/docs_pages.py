"""What the documentation pages and the browser fetch besides the API: the site's icon and a
ReDoc that reaches nothing but this server.

Swagger UI and ReDoc come from ``fastapi_offline``'s files (``DOCS_ASSETS`` in ``app.py``), but
ReDoc's script draws Redocly's logo from a CDN in its sidebar: a cluster with no way out would
show a broken image and a browser would try the network. ``/redoc`` therefore loads the script
from ``REDOC_SCRIPT``, the same file with that image made an empty inline one.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request, Response
from fastapi.openapi.docs import get_redoc_html
from fastapi.responses import FileResponse, HTMLResponse

FAVICON = Path(__file__).parent / "static" / "favicon.svg"
FAVICON_URL = "/favicon.ico"
REDOC_SCRIPT = "/docs/redoc.standalone.js"
_REDOC = Path(fastapi_offline.__file__).parent / "static" / "redoc.standalone.js"
_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
_NO_LOGO = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"

router = APIRouter(include_in_schema=False)


@router.get(FAVICON_URL)
def favicon() -> FileResponse:
    """The site's icon (an SVG, which browsers take at the address they ask for by default)."""
    return FileResponse(
        FAVICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
    )


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    """ReDoc's page, its script and icon from this server."""
    root = request.scope.get("root_path", "")
    return get_redoc_html(
        openapi_url=f"{root}{request.app.openapi_url}",
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{root}{REDOC_SCRIPT}",
        redoc_favicon_url=f"{root}{FAVICON_URL}",
        with_google_fonts=False,
    )


@cache
def _redoc_script() -> bytes:
    return _REDOC.read_text(encoding="utf-8").replace(_CDN_LOGO, _NO_LOGO).encode()


@router.get(REDOC_SCRIPT)
def redoc_script() -> Response:
    """ReDoc's script, its one CDN image replaced (read once, on first use)."""
    return Response(
        _redoc_script(),
        media_type="text/javascript",
        headers={"Cache-Control": "max-age=86400"},
    )
