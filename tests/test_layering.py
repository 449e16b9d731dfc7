"""The import rules between the product packages, read from their source with ``ast``.

Every import statement counts, those inside functions and ``TYPE_CHECKING`` blocks
too, so a rule cannot be dodged by importing late.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("postbox", "sync", "client", "ui", "spark_tools", "dataset")


@dataclass(frozen=True, slots=True)
class Import:
    """One imported name: ``from source import name``, or ``import source`` (no name)."""

    module: str
    package: str
    source: str
    name: str | None
    line: int

    @property
    def reached(self) -> tuple[str, ...]:
        """The modules this import may load: the source, and the name if it is a submodule."""
        if self.name is None:
            return (self.source,)
        return (self.source, f"{self.source}.{self.name}")

    def __str__(self) -> str:
        what = self.source if self.name is None else f"{self.source}:{self.name}"
        return f"{self.module} (line {self.line}) imports {what}"


def module_of(path: Path) -> tuple[str, str]:
    """The dotted name of the module at ``path`` and the package it belongs to."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    return ".".join(parts), ".".join(parts[:-1])


def imports_in(path: Path) -> Iterator[Import]:
    module, package = module_of(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, package, alias.name, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, source] if source else base)
            for alias in node.names:
                yield Import(module, package, source, alias.name, node.lineno)


SOURCES = tuple(path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py")))
IMPORTS = tuple(found for path in SOURCES for found in imports_in(path))


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(f"{prefix}.")


def ours(name: str) -> bool:
    return any(within(name, package) for package in PACKAGES)


def reaching(importer: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        str(found)
        for found in IMPORTS
        if within(found.module, importer)
        and any(within(reached, f) for reached in found.reached for f in forbidden)
    ]


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_every_product_package_is_read() -> None:
    modules = {module_of(path)[0] for path in SOURCES}
    assert set(PACKAGES) <= modules
    assert {"sync.server.store", "dataset.generator", "spark_tools.cli", "ui.models"} <= modules


def test_dataset_imports_neither_the_server_nor_the_engine_nor_the_app() -> None:
    assert reaching("dataset", ("sync.server", "sync.engine", "client", "ui")) == []


def test_postbox_imports_nothing_of_the_packages_above_it() -> None:
    assert reaching("postbox", ("sync", "client", "ui", "dataset", "spark_tools")) == []


def package_of(module: str) -> str:
    """The package of one of our modules: itself if it is a package."""
    if (ROOT / Path(*module.split("."))).is_dir():
        return module
    return module.rpartition(".")[0]


def private_parts(found: Import) -> list[str]:
    """The private names an import reaches below the package it shares with its importer."""
    path = found.source.split(".")
    shared = 0
    for mine, theirs in zip(found.package.split("."), path, strict=False):
        if mine != theirs:
            break
        shared += 1
    names = [*path[shared:], *([found.name] if found.name else [])]
    return [name for name in names if is_private(name)]


def test_no_module_imports_a_private_name_of_another_package() -> None:
    leaks = [
        str(found)
        for found in IMPORTS
        if ours(found.source) and package_of(found.source) != found.package and private_parts(found)
    ]
    assert leaks == []


def exported_names(package: str) -> set[str]:
    """The ``__all__`` of a package's ``__init__.py``."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{package}/__init__.py has no __all__")


def test_other_packages_use_dataset_through_its_exported_names() -> None:
    exported = exported_names("dataset")
    strays = [
        str(found)
        for found in IMPORTS
        if within(found.source, "dataset")
        and not within(found.module, "dataset")
        and (found.source != "dataset" or found.name not in exported)
    ]
    assert strays == []


# -- the design's arrows: ui -> client -> sync -> postbox -------------------------------

#: The client modules that start the window: the only ones that may import ``ui``.
LAUNCHERS = ("client.app", "client.screenshots")


def test_ui_reaches_sync_only_through_client() -> None:
    assert reaching("ui", ("sync", "dataset", "spark_tools")) == []


def test_client_imports_ui_only_to_launch_it() -> None:
    found = reaching("client", ("ui",))
    assert found
    assert [line for line in found if not line.startswith(LAUNCHERS)] == []


def test_sync_imports_neither_the_client_nor_the_window() -> None:
    assert reaching("sync", ("client", "ui")) == []


def test_the_protocol_and_the_update_rules_stand_alone() -> None:
    outside_protocol = [
        str(found)
        for found in IMPORTS
        if within(found.module, "sync.protocol")
        and ours(found.source)
        and not within(found.source, "sync.protocol")
        and found.source != "sync.errors"
    ]
    assert outside_protocol == []
    outside_rules = [
        str(found)
        for found in IMPORTS
        if within(found.module, "sync.state")
        and ours(found.source)
        and not any(within(found.source, p) for p in ("sync.state", "sync.protocol", "sync.errors"))
    ]
    assert outside_rules == []


def runtime_imports(path: Path) -> Iterator[str]:
    """The modules of ours ``path`` imports when it runs (not for type checking only)."""
    module, package = module_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in skipped or not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if ours(alias.name))
            continue
        source = node.module or ""
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            source = ".".join([*base, source] if source else base)
        if not ours(source):
            continue
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            is_module = (ROOT / Path(*submodule.split("."))).with_suffix(".py").exists()
            yield submodule if is_module else source


def test_postbox_modules_import_each_other_without_a_cycle() -> None:
    graph = {
        module_of(path)[0]: set(runtime_imports(path))
        for path in sorted((ROOT / "postbox").rglob("*.py"))
    }
    for module, targets in graph.items():
        # Importing a module runs its package's __init__ first: that is not a cycle.
        graph[module] = {t for t in targets if not within(module, t) and t in graph}
    cycles: list[list[str]] = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []
