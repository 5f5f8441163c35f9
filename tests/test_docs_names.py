"""docs/ARCHITECTURE.md names only what exists. It is drawn by hand from the code, so a rename or a deleted module
would leave it pointing at nothing; this reads it as a reader would look things up:

- every path it writes (`tools/pipeline.py`, `toolwire_shared/persistence/`, tests/unit/test_sdk_names.py, or a bare
  `loop.py`) is a file or folder of the repository, of a package's folder, or of a package;
- every code name in backticks or drawn in a diagram (`TurnCalls`, `Agent._step`, `pipeline.run(CallRequest)`,
  `exits.finish`) is there in toolwire's source: a called name is a function or class; `Class.member` a member of
  that class (or of a base it has from a library); `module.name` a name of that module; any other a name the source
  defines, uses or spells in a string (docstrings aside).

Also, every folder of tests/ says what it covers in its README.md, and tests/README.md lists them.
"""

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = ("ARCHITECTURE.md",)
PACKAGES = {
    "toolwire_server": "server",
    "toolwire_client": "client",
    "toolwire_shared": "shared",
    "toolwire_otel": "otel",
}
SOURCE = ("server", "client", "shared", "otel", "examples", "bench")
ROOTS = (
    REPO,
    REPO / "docs",
    *(REPO / folder for folder in PACKAGES.values()),
    *(REPO / folder / package for package, folder in PACKAGES.items()),
)
"""Where a written path may start: the repository, docs/, a package's folder (`toolwire_shared/persistence/`) or a
package itself (`tools/pipeline.py`)."""
SKIPPED = {".git", ".venv", "node_modules", "__pycache__", "node22"}

BACKTICKED = re.compile(r"`([^`\n]+)`")
FENCED = re.compile(r"^```\n(.*?)^```", re.S | re.M)
DRAWN = re.compile(
    r"(?<![\w./-])(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|_?[a-z]+_[a-z0-9_]+|_[a-z][a-z0-9_]*)(?![\w/-])"
)
"""A code name in a diagram: dotted (`TurnCalls.act`), CamelCase (`ToolBox`) or snake_case (`ask_model`)."""
PATH = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:py|md))\b")
NAME = re.compile(r"^(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?P<called>\(.*\))?$")
WORD = re.compile(r"[A-Za-z_]\w*")


class Source:
    """What toolwire's source defines and uses, read once with ast."""

    def __init__(self) -> None:
        self.known: set[str] = set()
        """Every name the source defines, uses, imports or spells as a string."""
        self.callables: set[str] = set()
        """Functions and classes, at any depth."""
        self.classes: dict[str, list[ast.ClassDef]] = defaultdict(list)
        self.modules: dict[str, set[str]] = defaultdict(set)
        """Module stem or dotted module (`loop`, `toolwire_client.loop`) -> every name defined in it."""
        for folder in SOURCE:
            for path in sorted((REPO / folder).rglob("*.py")):
                if not SKIPPED.intersection(path.parts):
                    self._read(path)
        self._merged()
        self.attributes = {name for cls in list(self.classes) for name in self.members(cls)[0]}
        """Every member of every class: what `variable.member` may name (`registry.chains`, `request.run`)."""

    def _read(self, path: Path) -> None:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        names = set[str]()
        if path.parts[len(REPO.parts)] in PACKAGES.values():  # `toolwire_shared.results`, a package's modules too
            dotted = ".".join(path.relative_to(REPO).with_suffix("").parts[1:]).removesuffix(".__init__")
            self.modules[dotted] = names
            package, _, module = dotted.rpartition(".")
            self.modules[package].add(module)
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            match node:
                case ast.FunctionDef() | ast.AsyncFunctionDef() | ast.ClassDef():
                    names.add(node.name)
                    self.callables.add(node.name)
                    self.known.add(node.name)
                    if isinstance(node, ast.ClassDef):
                        self.classes[node.name].append(node)
                case ast.Name():
                    self.known.add(node.id)
                    if isinstance(node.ctx, ast.Store):
                        names.add(node.id)
                case ast.Attribute():
                    self.known.add(node.attr)
                case ast.arg():
                    self.known.add(node.arg)
                case ast.keyword() if node.arg:
                    self.known.add(node.arg)
                case ast.alias():
                    self.known.update(node.name.split("."))
                    names.add(node.asname or node.name.split(".")[0])
                    if node.asname:
                        self.known.add(node.asname)
                case ast.ImportFrom() if node.module:
                    self.known.update(node.module.split("."))
                case ast.Constant() if isinstance(node.value, str) and id(node) not in docstrings:
                    self.known.update(WORD.findall(node.value))  # a literal, a table in SQL, a variable's name

    def _merged(self) -> None:
        """Module stems (`loop`, `pipeline`) from the dotted modules: a stem names every module of that name."""
        for dotted, names in list(self.modules.items()):
            stem = dotted.rpartition(".")[2]
            if stem != dotted:
                self.modules[stem] |= names

    def members(self, cls: str, seen: frozenset[str] = frozenset()) -> tuple[set[str], bool]:
        """The names the classes called `cls` define, and whether one of them has a base from a library."""
        found, external = set[str](), False
        for node in self.classes[cls]:
            for item in node.body:
                match item:
                    case ast.FunctionDef() | ast.AsyncFunctionDef() | ast.ClassDef():
                        found.add(item.name)
                    case ast.Assign():
                        found.update(t.id for t in item.targets if isinstance(t, ast.Name))
                    case ast.AnnAssign() if isinstance(item.target, ast.Name):
                        found.add(item.target.id)
            for inner in ast.walk(node):  # what its methods set on self
                match inner:
                    case ast.Attribute(value=ast.Name(id="self"), ctx=ast.Store()):
                        found.add(inner.attr)
            for base in node.bases:
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
                if name in self.classes and name not in seen and name != cls:
                    inherited, outside = self.members(name, seen | {cls})
                    found |= inherited
                    external |= outside
                elif name not in ("ABC", "Protocol", "Generic", "object"):
                    external = True
        return found, external

    def problem(self, written: str) -> str | None:
        """Why a backticked name names nothing in the source, or None."""
        match = NAME.match(written)
        if match is None:
            return None  # a command, an option, a JSON key: prose, not a name
        name, called = match["name"], match["called"] is not None
        *owner, last = name.split(".")
        if not owner:
            if called and last not in self.callables:
                return "no function or class of that name"
            return None if last in self.known else "no such name in the source"
        module = ".".join(owner)
        if module in self.modules:
            if last in self.modules[module] or (not called and "." not in module and last in self.attributes):
                return None  # a module's name; or a stem that is also a variable's name, and a member it has
            return f"{module} defines no {last}"
        head = owner[-1]
        if head in self.classes:
            members, external = self.members(head)
            if last in members or (external and last in self.known):
                return None
            return f"class {head} has no {last}"
        unknown = [part for part in name.split(".") if part not in self.known]
        return f"no such name: {', '.join(unknown)}" if unknown else None


@cache
def source() -> Source:
    return Source()


@cache
def files_by_name() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = defaultdict(list)
    for path in REPO.rglob("*"):
        if path.is_file() and not SKIPPED.intersection(path.relative_to(REPO).parts):
            found[path.name].append(path)
    return found


def path_exists(written: str) -> bool:
    """A path as the page writes it: from one of ROOTS, or a bare file name found anywhere in the repository."""
    if "/" not in written.rstrip("/"):
        if written.endswith("/"):
            return any((root / written).is_dir() for root in ROOTS)
        return written in files_by_name()
    return any((root / written).exists() for root in ROOTS)


def mentions(page: str) -> tuple[set[str], set[str]]:
    """(paths, code names) written on `page`."""
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    paths = set(PATH.findall(text))
    names = set()
    for span in BACKTICKED.findall(text):
        span = span.strip()
        if re.fullmatch(r"[\w./-]+/", span) or PATH.fullmatch(span):
            paths.add(span)
        elif " " not in span and "/" not in span:
            names.add(span)
    for block in FENCED.findall(text):
        names.update(name for name in DRAWN.findall(block) if not PATH.fullmatch(name))
    return paths, names


@pytest.mark.parametrize("page", PAGES)
def test_every_path_the_page_writes_exists(page: str) -> None:
    paths, _ = mentions(page)
    assert len(paths) > 20  # the page was read: a map names many modules
    missing = sorted(path for path in paths if not path_exists(path))
    assert not missing, f"docs/{page} names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES)
def test_every_code_name_the_page_writes_is_in_the_source(page: str) -> None:
    _, names = mentions(page)
    assert len(names) > 50
    wrong = {name: why for name in sorted(names) if (why := source().problem(name)) is not None}
    assert not wrong, f"docs/{page} names what the source does not have:\n" + "\n".join(
        f"  `{name}`: {why}" for name, why in wrong.items()
    )


def test_the_check_finds_a_made_up_name_and_path() -> None:
    assert source().problem("TurnCalls") is None
    assert source().problem("Agent._step") is None
    assert source().problem("pipeline.run(CallRequest)") is None
    assert source().problem("TurnCallz") is not None
    assert source().problem("Agent._stepp") is not None
    assert source().problem("pipeline.rnu()") is not None
    assert source().problem("toolwire_shared.results.kind_ov") is not None
    assert source().problem("toolwire_shared.results.kind_of") is None
    assert source().problem("no_such_function()") is not None
    assert path_exists("tools/pipeline.py") and path_exists("toolwire_shared/persistence/")
    assert not path_exists("tools/pipelines.py") and not path_exists("nowhere/")


def test_every_test_folder_says_what_it_covers() -> None:
    folders = sorted(
        path.name
        for path in (REPO / "tests").iterdir()
        if path.is_dir() and not path.name.startswith((".", "__")) and path.name not in SKIPPED
    )
    silent = [name for name in folders if not _says_something(REPO / "tests" / name / "README.md")]
    assert not silent, f"tests/ folders without a README.md saying what they cover: {silent}"
    index = (REPO / "tests" / "README.md").read_text(encoding="utf-8")
    unlisted = [name for name in folders if f"{name}/" not in index]
    assert not unlisted, f"tests/README.md does not list: {unlisted}"


def _says_something(readme: Path) -> bool:
    """A heading and at least one line of prose."""
    if not readme.is_file():
        return False
    lines = [line for line in readme.read_text(encoding="utf-8").splitlines() if line.strip()]
    return len(lines) >= 2 and lines[0].startswith("#")
