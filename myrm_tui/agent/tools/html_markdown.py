"""A fetched HTML page as the Markdown `web_fetch` gives the model: the main content, no chrome.

Why markdownify (with BeautifulSoup and the stdlib parser) and this small main-content pass:
`python -m bench.html_to_markdown` compared trafilatura, markdownify and html2text on saved
docs, GitHub-README and news pages. trafilatura removes the most chrome but dropped every
heading of the GitHub README, the blank lines inside code, and a blockquote, gave different
output for the same page depending on what it had parsed before, and pulls ~60 MB of
dependencies; html2text is GPL-3.0 (myrm is MIT). markdownify keeps all of a page's content
(headings, code, tables, lists) but converts the chrome too; picking the page's main element
first and dropping navigation, banners and ads inside it (below) keeps the content and removes
most of the chrome, deterministically, for 1.5 MB of dependencies. The figures are in the
README's web_fetch section.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin

# Elements that never carry readable content (or that only a browser can use).
_NEVER_CONTENT = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "iframe",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "canvas",
    "link",
    "meta",
    "object",
    "embed",
    "dialog",
)
# Page chrome by element: site navigation, side rails and page footers.
_CHROME_TAGS = ("nav", "aside", "footer")
# Page chrome by a word of its class or id (split at - and _): ads, consent banners, share bars,
# paywall and newsletter prompts, "related" rails, breadcrumbs, tables of contents, heading
# permalinks. Comments are kept on purpose: on an issue tracker page they are the content.
_CHROME_WORDS = frozenset(
    {
        "ad",
        "ads",
        "advert",
        "advertisement",
        "banner",
        "breadcrumb",
        "breadcrumbs",
        "consent",
        "cookie",
        "cookies",
        "headerlink",
        "newsletter",
        "paywall",
        "popup",
        "promo",
        "related",
        "share",
        "sharing",
        "sidebar",
        "social",
        "sponsored",
        "subscribe",
        "toc",
        "anchor",
        "announcement",
        "skip",
    }
)
# A page with several <article>s (a listing) is converted whole from its <main> unless one of
# them holds at least this share of main's text (then that one is the page's content).
_MAIN_ARTICLE_SHARE = 0.5
_CODE_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|highlight)-([A-Za-z0-9_+#-]+)")
_BLANK_RUNS = re.compile(r"\n{3,}")
# An HTML comment as a browser ends it: at `-->`, at the `>` of an empty `<!-->` / `<!--->`, or at
# the end of the document when it is never closed. The stdlib parser instead gives an unclosed
# comment's tail back as text, which would hand the model markup a browser never shows.
_COMMENT = re.compile(r"<!--(?:-?>|.*?(?:-->|\Z))", re.S)
# An `&` that does not open a complete reference (`&amp;`, `&#38;`, `&#x26;`): the stdlib parser
# waits for the rest of such a reference and, at the end of the document, hands everything after
# it back as text, markup included (`&#<script>` kept the tag as text).
_BARE_AMPERSAND = re.compile(r"&(?!(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);)")


def _words(tag: Any) -> set[str]:
    values = [*(tag.get("class") or ()), tag.get("id") or ""]
    return {word.lower() for value in values for word in re.split(r"[-_\s]+", str(value)) if word}


def _hidden(tag: Any) -> bool:
    style = str(tag.get("style") or "").replace(" ", "").lower()
    return tag.has_attr("hidden") or str(tag.get("aria-hidden") or "").lower() == "true" or "display:none" in style


def _text_length(tag: Any) -> int:
    return len(tag.get_text(" ", strip=True))


def _main_element(soup: Any) -> Any:
    """The element that holds the page's content: its main article, else <main>, else <body>."""
    main = soup.find("main") or soup.find(attrs={"role": "main"}) or soup.body or soup
    articles = soup.find_all("article")
    if not articles:
        return main
    longest = max(articles, key=_text_length)
    if len(articles) == 1 or _text_length(longest) >= _MAIN_ARTICLE_SHARE * _text_length(main):
        return longest
    return main


def _code_language(tag: Any) -> str:
    """A fence's language from the class of the <pre> or the wrapper a highlighter put around it."""
    for node in (tag, tag.find("code"), tag.parent):
        if node is None:
            continue
        match = _CODE_CLASS.search(" ".join(node.get("class") or ()))
        if match:
            return match.group(1).lower()
    return ""


def html_to_markdown(html: str, base_url: str = "") -> tuple[str, str]:
    """(title, Markdown of the page's main content). Links and images point at absolute URLs
    (from `base_url`), so the model can fetch what a page links to."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(_BARE_AMPERSAND.sub("&amp;", _COMMENT.sub("", html)), "html.parser")
    title = " ".join(soup.title.get_text().split()) if soup.title is not None else ""
    for tag in soup.find_all(_NEVER_CONTENT):
        tag.decompose()
    root = _main_element(soup)
    for tag in root.find_all(True):
        if tag.decomposed:
            continue
        if tag.name in _CHROME_TAGS or _hidden(tag) or (_words(tag) & _CHROME_WORDS):
            tag.decompose()
    if base_url:
        for tag in root.find_all(["a", "img"]):
            attribute = "href" if tag.name == "a" else "src"
            value = tag.get(attribute)
            if isinstance(value, str) and value and not value.startswith(("#", "javascript:", "data:")):
                tag[attribute] = urljoin(base_url, value)
    converter = MarkdownConverter(heading_style="ATX", bullets="-", code_language_callback=_code_language)
    text = converter.convert_soup(root)
    lines = [line.rstrip() for line in text.replace("\r", "").split("\n")]
    return title, _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()
