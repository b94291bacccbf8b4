"""Read a lesson as a learner does: one layer a page, reached through the outline's links."""

from __future__ import annotations

import html
import re


def layer_urls(page: str) -> list[str]:
    """Return the URLs of the lesson's layer pages, as its outline links them."""
    return [html.unescape(url) for url in re.findall(r'<li><a href="([^"#]*\?layer=\d+)#layer-\d+"', page)]


def whole_lesson(client, url: str) -> str:
    """Return every layer page of the lesson at ``url``, one after another, followed from the outline."""
    first = client.get(url).content.decode()
    return "\n".join(client.get(layer).content.decode() for layer in layer_urls(first)) or first
