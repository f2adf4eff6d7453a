"""Markdown files (a pull-request comment, an Actions job summary) → how GitHub shows them: the
rendered HTML, a first-screen and a full-page screenshot of each, and a JSON report on stdout.

Usage::

    python bench/render_comment.py --comment comment.md [--comment other.md] [--summary summary.md]
        --out DIR [--pr-title "Fix the parser"] [--tools-dir DIR] [--chromium /usr/bin/chromium]

Lets the team look at what a reviewer sees, and lets a script assert on it (for example that the
first screen shows the summary line).

Rendering, as close to GitHub as this machine allows:

- Markdown → HTML with ``cmark-gfm`` (GitHub's own renderer, Debian package ``cmark-gfm``) and the
  GFM extensions table, strikethrough, autolink, tagfilter, tasklist and footnotes, raw HTML
  passed through (``--unsafe``). A ``--comment`` is rendered with ``--hardbreaks``: in issue and
  pull-request comments GitHub turns every newline inside a paragraph into a line break, which it
  does not do in files (a ``--summary`` is rendered like a file; that GitHub does so for job
  summaries too is an assumption).
- The HTML is then filtered by an allowlist modelled on GitHub's sanitizer: elements such as
  details, summary, sub, sup, br, code, kbd, tables and lists stay; unknown elements lose their tag
  but keep their text; script, style, iframe and similar lose their content too; every ``on*``,
  ``style`` and ``class`` attribute goes (except the classes cmark-gfm sets for code languages and
  footnotes); links keep only http, https, mailto and relative targets; HTML comments disappear.
  The tagfilter extension already turns ``<script>``, ``<style>``, ``<iframe>`` … written in the
  markdown into visible text, as github.com shows them.
- What GitHub adds after rendering: task-list classes, headings wrapped in ``markdown-heading``,
  alerts (``> [!NOTE]`` … ``> [!CAUTION]``, without their icons), and ```` ```mermaid ```` blocks
  turned into diagrams with the npm package ``mermaid`` (theme ``default``, security level
  ``strict``). A block that mermaid cannot parse or render shows GitHub's "Unable to render rich
  display" box with the error.
- Stylesheet: ``github-markdown-light.css`` from the npm package ``github-markdown-css``, at 14px
  as in comments; fonts from GitHub's font stack as a Linux reviewer gets them (Noto Sans, Noto
  Color Emoji, Liberation Mono).
- Frame (``bench/render/comment.html``, ``frame.css``): a 1000 px wide page; the comment as on a
  pull request's timeline: a 40 px avatar, a bordered box with a grey header line
  "github-actions bot commented now", a 878 px wide content area. A job summary: full width
  (968 px), no box. ``--pr-title`` puts the pull request's title line above either.

Outputs, for each input ``NAME.md`` in ``--out``: ``NAME.html`` (the page as shot, diagrams as
inline SVG, no script), ``NAME-first-screen.png`` (viewport 1000 x 900 px: the first screen a
reviewer sees) and ``NAME-full.png`` (the whole page). The report on stdout lists, per file: the
number of mermaid blocks, their parse or render errors, for each diagram its type and its number of
nodes and edges (counted in the rendered SVG), the page height in px, the number of screens
(height / 900), and ``first_screen_text``, the text visible within the first 900 px, one block a
line. Exit status: 0; 1 when any mermaid block fails to parse or render; 2 when a tool is missing.

Installation (on the first run; nothing here is needed by the test suite):

- Debian packages ``chromium cmark-gfm fonts-noto-core fonts-noto-color-emoji fonts-liberation``
  and node with npm (``nodejs npm``). The script checks them with ``dpkg-query``; when one is
  missing it runs ``apt-get install -y ...`` itself if it runs as root, and otherwise prints that
  command and exits 2. Chromium's own browser download is not used: headless Chromium is Debian's
  ``/usr/bin/chromium``, started with --headless --no-sandbox --disable-gpu --disable-quic
  --no-first-run --disable-background-networking --disable-component-update --disable-sync and a
  fresh --user-data-dir.
- npm packages pinned in ``bench/render/package.json`` (github-markdown-css, mermaid,
  playwright-core) are installed with ``npm install`` into ``--tools-dir`` (default
  ``$XDG_CACHE_HOME/knowing-pr-bench/render``, else ``~/.cache/knowing-pr-bench/render``), again
  whenever the pins change. ``bench/render/shoot.mjs`` drives Chromium through playwright-core.

Everything runs offline: the page is one local file with the stylesheets inlined, mermaid is
injected from the tools directory, and the browser refuses every request that is not a local file.

Known differences from github.com: the mermaid version GitHub runs is not known here (a
```` ```mermaid ```` block containing ``info`` shows it on GitHub: update the pin to match);
GitHub draws diagrams in a sandboxed frame with pan and zoom buttons, not shown here; syntax
highlighting of other code blocks, emoji shortcodes (``:warning:``), @mentions, issue references
and bare commit hashes are not linked or coloured; fonts differ on macOS (SF Pro) and Windows
(Segoe UI), which set text a little wider than Noto Sans.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from string import Template
from typing import Any

ASSETS = Path(__file__).resolve().parent / "render"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1000, "height": 900}
DEBIAN_PACKAGES = ("chromium", "cmark-gfm", "fonts-noto-core", "fonts-noto-color-emoji", "fonts-liberation")
NODE_PACKAGES = ("nodejs", "npm")
GFM_EXTENSIONS = ("table", "strikethrough", "autolink", "tagfilter", "tasklist", "footnotes")
EXIT_MERMAID_ERROR = 1
EXIT_MISSING_TOOL = 2


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The sanitizer's allowlist, modelled on GitHub's (html-pipeline's SanitizationFilter).
ALLOWED_ELEMENTS = words(
    "h1 h2 h3 h4 h5 h6 br b i strong em a pre code img tt div ins del sup sub p ol ul table thead tbody "
    "tfoot blockquote dl dt dd kbd q samp var hr ruby rt rp li tr td th s strike summary details caption "
    "figure figcaption abbr bdo cite dfn mark small span time wbr input picture source section"
)
ELEMENTS_DROPPED_WITH_CONTENT = words(
    "script style iframe textarea title noscript template object embed select xmp noembed noframes "
    "plaintext frameset frame applet"
)
VOID_ELEMENTS = words("br img input hr wbr source")
ALLOWED_ATTRIBUTES = words(
    "abbr align alt aria-hidden aria-label border cellpadding cellspacing checked colspan datetime dir "
    "disabled headers height hspace id lang name open rowspan scope span start summary title type valign "
    "value width data-footnotes data-footnote-ref data-footnote-backref"
)
ATTRIBUTES_BY_ELEMENT = {
    "a": frozenset({"href"}),
    "img": frozenset({"src", "longdesc"}),
    "blockquote": frozenset({"cite"}),
    "del": frozenset({"cite"}),
    "ins": frozenset({"cite"}),
    "q": frozenset({"cite"}),
    "source": frozenset({"srcset", "media"}),
}
URL_ATTRIBUTES = frozenset({"href", "src", "cite", "longdesc"})
ALLOWED_URL_SCHEMES = {"href": ("http", "https", "mailto"), "src": ("http", "https")}
ALLOWED_CLASSES = re.compile(r"^(language-[\w+#.-]+|footnotes|footnote-ref|footnote-backref)$")
URL_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.-]*):")

ALERT_KINDS = ("NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION")


@dataclass(frozen=True)
class Tools:
    node: str
    cmark: str
    chromium: str
    tools_dir: Path

    @property
    def markdown_css(self) -> Path:
        return self.tools_dir / "node_modules" / "github-markdown-css" / "github-markdown-light.css"


@dataclass(frozen=True)
class Input:
    kind: str  # "comment" or "summary"
    path: Path
    name: str


def default_tools_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "knowing-pr-bench" / "render"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comment", action="append", default=[], type=Path, help="PR comment markdown")
    parser.add_argument("--summary", action="append", default=[], type=Path, help="job summary markdown")
    parser.add_argument("--out", required=True, type=Path, help="directory for the HTML and screenshots")
    parser.add_argument("--pr-title", default=None, help="pull request title shown above the comment")
    parser.add_argument("--tools-dir", type=Path, default=default_tools_dir(), help="npm install target")
    parser.add_argument("--chromium", default=CHROMIUM, help="Chromium executable (Debian's package)")
    args = parser.parse_args(argv)
    if not args.comment and not args.summary:
        parser.error("give at least one --comment or --summary file")
    return args


# --- tools -------------------------------------------------------------------------------------


def missing_debian_packages(packages: tuple[str, ...]) -> list[str]:
    missing = []
    for package in packages:
        status = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
        ).stdout
        if "install ok installed" not in status:
            missing.append(package)
    return missing


def ensure_debian_packages() -> None:
    """Installs the missing Debian packages when running as root; otherwise says how, and exits 2."""
    if shutil.which("dpkg-query") is None:
        return
    missing = missing_debian_packages(DEBIAN_PACKAGES)
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing += [p for p in NODE_PACKAGES if p not in missing]
    if not missing:
        return
    command = ["apt-get", "install", "-y", *missing]
    if os.geteuid() == 0:
        print(f"installing: {' '.join(command)}", file=sys.stderr)
        if subprocess.run(command, stdout=sys.stderr).returncode == 0:
            return
    print(f"missing Debian packages; run: sudo {' '.join(command)}", file=sys.stderr)
    sys.exit(EXIT_MISSING_TOOL)


def ensure_node_packages(tools_dir: Path) -> None:
    """``npm install`` of the pinned packages into ``tools_dir``, when absent or when the pins changed."""
    pins = (ASSETS / "package.json").read_text()
    installed_pins = tools_dir / "package.json"
    complete = tools_dir / "node_modules" / ".package-lock.json"
    if installed_pins.exists() and installed_pins.read_text() == pins and complete.exists():
        return
    tools_dir.mkdir(parents=True, exist_ok=True)
    installed_pins.write_text(pins)
    print(f"npm install into {tools_dir}", file=sys.stderr)
    result = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--omit=dev"], cwd=tools_dir, stdout=sys.stderr
    )
    if result.returncode != 0:
        installed_pins.unlink()
        sys.exit(f"npm install failed in {tools_dir}")


def ensure_tools(tools_dir: Path, chromium: str) -> Tools:
    ensure_debian_packages()
    ensure_node_packages(tools_dir)
    node, cmark = shutil.which("node"), shutil.which("cmark-gfm")
    for name, found in (("node", node), ("cmark-gfm", cmark), (chromium, shutil.which(chromium))):
        if found is None:
            print(
                f"{name} not found; run: sudo apt-get install -y {' '.join(DEBIAN_PACKAGES)}", file=sys.stderr
            )
            sys.exit(EXIT_MISSING_TOOL)
    assert node is not None and cmark is not None
    return Tools(node=node, cmark=cmark, chromium=chromium, tools_dir=tools_dir)


def node_package_versions(tools_dir: Path) -> dict[str, str]:
    pins = json.loads((ASSETS / "package.json").read_text())["dependencies"]
    versions = {}
    for name in pins:
        manifest = tools_dir / "node_modules" / name / "package.json"
        versions[name] = json.loads(manifest.read_text())["version"]
    return versions


# --- markdown → GitHub's HTML ---------------------------------------------------------------------


def markdown_to_html(cmark: str, markdown: str, hard_breaks: bool) -> str:
    command = [cmark, "--unsafe"]
    for extension in GFM_EXTENSIONS:
        command += ["--extension", extension]
    if hard_breaks:
        command.append("--hardbreaks")
    return subprocess.run(command, input=markdown, capture_output=True, text=True, check=True).stdout


def url_allowed(attribute: str, value: str) -> bool:
    scheme = URL_SCHEME.match(value)
    if scheme is None:
        return True  # relative, or a fragment
    return scheme.group(1).lower() in ALLOWED_URL_SCHEMES.get(attribute, ("http", "https"))


class GitHubSanitizer(HTMLParser):
    """HTML → the same HTML with only allowlisted elements, attributes and URLs (GitHub's rules)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.parts: list[str] = []
        self.dropping: list[str] = []  # open elements whose content is dropped

    def kept_attributes(self, tag: str, attrs: list[tuple[str, str | None]]) -> str:
        kept = []
        for name, value in attrs:
            allowed = name in ALLOWED_ATTRIBUTES or name in ATTRIBUTES_BY_ELEMENT.get(tag, ())
            if name == "class" and value is not None:
                classes = [c for c in value.split() if ALLOWED_CLASSES.match(c)]
                allowed, value = bool(classes), " ".join(classes)
            if not allowed or (name in URL_ATTRIBUTES and not url_allowed(name, value or "")):
                continue
            kept.append(f" {name}" if value is None else f' {name}="{html.escape(value, quote=True)}"')
        return "".join(kept)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ELEMENTS_DROPPED_WITH_CONTENT:
            if tag not in VOID_ELEMENTS:
                self.dropping.append(tag)
            return
        if self.dropping or tag not in ALLOWED_ELEMENTS:
            return
        if tag == "input" and dict(attrs).get("type") != "checkbox":
            return
        self.parts.append(f"<{tag}{self.kept_attributes(tag, attrs)}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ELEMENTS_DROPPED_WITH_CONTENT:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.dropping:
            if tag == self.dropping[-1]:
                self.dropping.pop()
            return
        if tag in ALLOWED_ELEMENTS and tag not in VOID_ELEMENTS:
            self.parts.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if not self.dropping:
            self.parts.append(data)

    def handle_entityref(self, name: str) -> None:
        self.handle_data(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.handle_data(f"&#{name};")

    def unknown_decl(self, data: str) -> None:
        """CDATA and other declarations: dropped, like comments and processing instructions."""


def sanitize(fragment: str) -> str:
    sanitizer = GitHubSanitizer()
    sanitizer.feed(fragment)
    sanitizer.close()
    return "".join(sanitizer.parts)


def mark_task_lists(fragment: str) -> str:
    fragment = re.sub(
        r'<li><input type="checkbox"',
        '<li class="task-list-item"><input class="task-list-item-checkbox" type="checkbox"',
        fragment,
    )
    return re.sub(r'<ul>(\s*<li class="task-list-item">)', r'<ul class="contains-task-list">\1', fragment)


def wrap_headings(fragment: str) -> str:
    return re.sub(
        r"<h([1-6])>(.*?)</h\1>",
        r'<div class="markdown-heading"><h\1 class="heading-element">\2</h\1></div>',
        fragment,
        flags=re.DOTALL,
    )


def render_alerts(fragment: str) -> str:
    """``> [!NOTE]`` blockquotes → GitHub's alert boxes (title without the icon)."""
    opening = re.compile(r"<blockquote>\s*<p>\[!(" + "|".join(ALERT_KINDS) + r")\]\s*(<br>)?\s*")

    def replace(match: re.Match[str]) -> str:
        kind = match.group(1).lower()
        return f'<div class="markdown-alert markdown-alert-{kind}"><p class="markdown-alert-title">{kind.title()}</p><p>'

    result, position = [], 0
    for match in opening.finditer(fragment):
        end = fragment.find("</blockquote>", match.end())
        if match.start() < position or end < 0 or "<blockquote>" in fragment[match.end() : end]:
            continue
        result += [fragment[position : match.start()], replace(match), fragment[match.end() : end], "</div>"]
        position = end + len("</blockquote>")
    result.append(fragment[position:])
    return "".join(result).replace("</p><p></p>", "</p>")


def mermaid_placeholders(fragment: str) -> str:
    """```mermaid code blocks → containers that bench/render/shoot.mjs renders as diagrams."""
    return re.sub(
        r'<pre><code class="language-mermaid">(.*?)</code></pre>',
        r'<div class="kp-mermaid"><pre class="kp-mermaid-source" hidden>\1</pre></div>',
        fragment,
        flags=re.DOTALL,
    )


def github_html(cmark: str, markdown: str, kind: str) -> str:
    fragment = sanitize(markdown_to_html(cmark, markdown, hard_breaks=kind == "comment"))
    return mermaid_placeholders(render_alerts(wrap_headings(mark_task_lists(fragment))))


def pr_header(pr_title: str | None) -> str:
    if not pr_title:
        return ""
    return (
        f'<div class="kp-pr-header"><h1>{html.escape(pr_title)} <span class="kp-pr-number">#1</span></h1>'
        '<span class="kp-pr-state">Open</span></div>'
    )


def page_source(tools: Tools, item: Input, body: str, pr_title: str | None) -> str:
    template = Template((ASSETS / f"{item.kind}.html").read_text())
    return template.substitute(
        title=html.escape(item.path.stem),
        markdown_css=tools.markdown_css.read_text(),
        frame_css=(ASSETS / "frame.css").read_text(),
        pr_header=pr_header(pr_title),
        body=body,
    )


# --- screenshots ---------------------------------------------------------------------------------


def inputs_of(args: argparse.Namespace) -> list[Input]:
    items, used = [], set()
    for kind, paths in (("comment", args.comment), ("summary", args.summary)):
        for path in paths:
            name, suffix = path.stem, 2
            while name in used:
                name, suffix = f"{path.stem}-{suffix}", suffix + 1
            used.add(name)
            items.append(Input(kind=kind, path=path, name=name))
    return items


def shoot(tools: Tools, specs: list[dict[str, str]], scratch: Path) -> list[dict[str, Any]]:
    job = {
        "toolsDir": str(tools.tools_dir),
        "chromium": tools.chromium,
        "userDataDir": str(scratch / "chromium-profile"),
        "viewport": VIEWPORT,
        "pages": specs,
    }
    result = subprocess.run(
        [tools.node, str(ASSETS / "shoot.mjs")], input=json.dumps(job), capture_output=True, text=True
    )
    if result.returncode != 0:
        sys.exit(f"bench/render/shoot.mjs failed:\n{result.stderr}")
    return list(json.loads(result.stdout))


def render_all(tools: Tools, items: list[Input], out: Path, pr_title: str | None) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="render-comment-") as scratch_name:
        scratch = Path(scratch_name)
        specs = []
        for item in items:
            body = github_html(tools.cmark, item.path.read_text(encoding="utf-8"), item.kind)
            source = scratch / f"{item.name}.html"
            source.write_text(page_source(tools, item, body, pr_title), encoding="utf-8")
            specs.append(
                {
                    "name": item.name,
                    "kind": item.kind,
                    "input": str(item.path),
                    "source": str(source),
                    "html": str(out / f"{item.name}.html"),
                    "firstScreen": str(out / f"{item.name}-first-screen.png"),
                    "full": str(out / f"{item.name}-full.png"),
                }
            )
        return shoot(tools, specs, scratch)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tools = ensure_tools(args.tools_dir.expanduser(), args.chromium)
    pages = render_all(tools, inputs_of(args), args.out, args.pr_title)
    errors = sum(len(page["mermaid_errors"]) for page in pages)
    report = {
        "viewport": VIEWPORT,
        "tools": node_package_versions(tools.tools_dir),
        "pages": pages,
        "mermaid_error_count": errors,
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return EXIT_MERMAID_ERROR if errors else 0


if __name__ == "__main__":
    sys.exit(main())
