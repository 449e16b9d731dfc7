"""Each package has one error root: every public exception a module of it defines
derives from the package's root, whose docstring draws the tree."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import dataset
import postbox
import spark_tools
import sync
from dataset import DatasetError
from postbox import PostboxError
from spark_tools.errors import SeedError
from sync.errors import SyncError

ROOTS: dict[ModuleType, type[Exception]] = {
    postbox: PostboxError,
    sync: SyncError,
    dataset: DatasetError,
    spark_tools: SeedError,
}


def _modules(package: ModuleType) -> list[ModuleType]:
    names = [package.__name__]
    names += [info.name for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return [importlib.import_module(name) for name in names]


def _exceptions(package: ModuleType) -> list[type[BaseException]]:
    found = {}
    for module in _modules(package):
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found[f"{module.__name__}.{name}"] = value
    return list(found.values())


@pytest.mark.parametrize("package", list(ROOTS), ids=lambda p: p.__name__)
def test_every_exception_of_a_package_derives_from_its_root(package: ModuleType) -> None:
    root = ROOTS[package]
    exceptions = _exceptions(package)
    assert root in exceptions
    strays = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in exceptions
        if not issubclass(cls, root) and not issubclass(cls, (Warning,))
    ]
    assert strays == []


@pytest.mark.parametrize("package", list(ROOTS), ids=lambda p: p.__name__)
def test_the_root_draws_the_tree(package: ModuleType) -> None:
    root = ROOTS[package]
    tree = inspect.getdoc(inspect.getmodule(root)) or ""
    tree += inspect.getdoc(root) or ""
    for cls in _exceptions(package):
        assert cls.__name__ in tree, f"{cls.__name__} is missing from {root.__name__}'s tree"
