"""The wheel's version is the one in ../CMakeLists.txt's project() line, the
version of the library and binary the module drives: one number, one place.
(pyproject.toml holds everything else.)"""
import pathlib
import re

from setuptools import setup

CMAKELISTS = pathlib.Path(__file__).resolve().parent.parent / "CMakeLists.txt"


def cmake_project_version():
    match = re.search(r"^project\(gpudoctor\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)\b",
                      CMAKELISTS.read_text(), re.MULTILINE)
    if not match:
        raise SystemExit(f"setup.py: no 'project(gpudoctor VERSION x.y.z' line in {CMAKELISTS}")
    return match.group(1)


setup(version=cmake_project_version())
