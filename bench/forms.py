"""Read a page's HTML forms and fill them in as a browser would, so the bench drives the app by its URLs.

Only the standard library: the bench follows the pages learners and instructors see (answer
forms on a lesson page, the admin's change form, the log-in form) instead of importing the
app's modules, which may move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode


@dataclass
class Form:
    """One ``<form>``: where it posts and what a browser would send from it."""

    action: str
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list)  # what is sent as it stands
    choices: dict[str, list[str]] = field(default_factory=dict)  # radio groups: one value each is sent
    buttons: list[tuple[str, str]] = field(default_factory=list)  # named submit buttons: the one clicked is sent
    typed: list[str] = field(default_factory=list)  # empty text inputs and textareas a person fills in
    links: list[str] = field(default_factory=list)  # hrefs inside the form (the admin's inline "Change" links)

    def body(self, pick: int = 0, typed: str = "1", changes: dict[str, str] | None = None) -> str:
        """Return the urlencoded body a browser sends when button (and radio) number ``pick`` is chosen.

        Fields keep their values unless ``changes`` names them; blanks get ``typed``. The page's CSRF
        token is left out (the bench sends its own, in ``changes`` or a header).
        """
        changes = dict(changes or {})
        pairs = [(name, changes.pop(name, value)) for name, value in self.fields if name != "csrfmiddlewaretoken"]
        pairs += [(name, changes.pop(name, typed)) for name in self.typed]
        pairs += [(name, values[pick % len(values)]) for name, values in self.choices.items()]
        if self.buttons:
            pairs.append(self.buttons[pick % len(self.buttons)])
        return urlencode(pairs + list(changes.items()))


class _FormParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self.form: Form | None = None
        self.select: tuple[str, list[str], list[str]] | None = None  # name, options, selected
        self.textarea: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: v if v is not None else "" for k, v in attrs}
        if tag == "form":
            self.form = Form(action=a.get("action", ""), method=a.get("method", "get").lower())
            self.forms.append(self.form)
        if self.form is None:
            return
        name = a.get("name")
        if tag == "a" and a.get("href"):
            self.form.links.append(a["href"])
        elif tag == "input" and name:
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio"):
                if kind == "radio":
                    self.form.choices.setdefault(name, []).append(a.get("value", "on"))
                elif "checked" in a:
                    self.form.fields.append((name, a.get("value", "on")))
            elif kind in ("submit", "button", "image", "file", "reset"):
                if kind == "submit":
                    self.form.buttons.append((name, a.get("value", "")))
            elif kind == "hidden" or a.get("value"):
                self.form.fields.append((name, a.get("value", "")))
            else:
                self.form.typed.append(name)
        elif tag == "button" and name and a.get("type", "submit") == "submit":
            self.form.buttons.append((name, a.get("value", "")))
        elif tag == "select" and name:
            self.select = (name, [], [])
        elif tag == "option" and self.select is not None:
            self.select[1].append(a.get("value", ""))
            if "selected" in a:
                self.select[2].append(a.get("value", ""))
        elif tag == "textarea" and name:
            self.textarea = (name, [])

    def handle_data(self, data):
        if self.textarea is not None:
            self.textarea[1].append(data)

    def handle_endtag(self, tag):
        if tag == "form":
            self.form = None
        elif tag == "select" and self.select is not None and self.form is not None:
            name, options, selected = self.select
            # A browser sends the first option of a single select when none is marked.
            for value in selected or options[:1]:
                self.form.fields.append((name, value))
            self.select = None
        elif tag == "textarea" and self.textarea is not None and self.form is not None:
            name, parts = self.textarea
            text = "".join(parts)
            # Browsers drop the newline right after <textarea>, which Django's widget writes.
            text = text[1:] if text.startswith("\n") else text
            if text:
                self.form.fields.append((name, text))
            else:
                self.form.typed.append(name)
            self.textarea = None


def parse_forms(html: str) -> list[Form]:
    """Return every form of the page, in document order."""
    parser = _FormParser()
    parser.feed(html)
    return parser.forms


def answer_forms(html: str) -> list[Form]:
    """Return the forms of a lesson page that answer an item (their action ends in ``/answer/``)."""
    return [form for form in parse_forms(html) if form.method == "post" and form.action.endswith("/answer/")]
