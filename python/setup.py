"""The wheel's version is the one in ../CMakeLists.txt's project() line, the
version of the library and binary the module drives: one number, one place.
(pyproject.toml holds everything else.)

Two wheels come from here:

- without $GPUDOCTOR_BUNDLE: the pure one, gpudoctor-X-py3-none-any.whl,
  the module alone (gpudoctor installed apart, found through PATH);
- with GPUDOCTOR_BUNDLE=DIR, DIR holding the release build's ``gpudoctor``
  and ``libgpudoctor.so.0``: both go into the package directory, beside
  __init__.py (the module loads the library from there, the library runs
  the binary beside itself), and the wheel is tagged
  py3-none-manylinux_<glibc>_<arch>: any Python 3 (the files are not Python
  extensions), the glibc the binaries need at least, the machine their ELF
  header names (not the host's: a cross-built bundle is tagged for its own).

The glibc in the tag is the newest GLIBC_x.y version the binaries' dynamic
sections ask the loader for, and never less than $GPUDOCTOR_GLIBC_FLOOR
(default 2.31, the Debian 11 sysroot the release links against): a tag no
lower than what the loader will demand, so pip refuses the wheel where the
binary could not start.
"""
import os
import pathlib
import re
import shutil
import struct

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; Debian 12's has wheel's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = pathlib.Path(__file__).resolve().parent
CMAKELISTS = HERE.parent / "CMakeLists.txt"
BUNDLED = ("gpudoctor", "libgpudoctor.so.0")
DEFAULT_GLIBC_FLOOR = "2.31"
# ELF e_machine -> the architecture in a manylinux tag.
ARCHES = {62: "x86_64", 183: "aarch64"}


def cmake_project_version():
    match = re.search(r"^project\(gpudoctor\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)\b",
                      CMAKELISTS.read_text(), re.MULTILINE)
    if not match:
        raise SystemExit(f"setup.py: no 'project(gpudoctor VERSION x.y.z' line in {CMAKELISTS}")
    return match.group(1)


class Elf:
    """What the loader needs from one ELF file: its machine and the GLIBC_
    versions its dynamic section asks for (DT_VERNEED), read from the
    program headers as ld.so reads them (a stripped file has the same)."""

    def __init__(self, path):
        self.path = path
        data = pathlib.Path(path).read_bytes()
        # e_ident: "\x7fELF", class (2 = 64-bit), data (1 = little endian).
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] not in (1, 2):
            raise SystemExit(f"setup.py: {path} is not a 64-bit ELF file")
        self.data = data
        self.end = "<" if data[5] == 1 else ">"
        (self.machine,) = self._unpack("H", 18)
        (phoff,) = self._unpack("Q", 32)
        phentsize, phnum = self._unpack("HH", 54)
        self.loads = []  # (vaddr, offset, filesz)
        dynamic = None
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = self._unpack("IIQQQQ", phoff + i * phentsize)
            if p_type == 1:  # PT_LOAD
                self.loads.append((p_vaddr, p_offset, p_filesz))
            elif p_type == 2:  # PT_DYNAMIC
                dynamic = (p_offset, p_filesz)
        self.dyn = {}
        if dynamic:
            for off in range(dynamic[0], dynamic[0] + dynamic[1], 16):
                tag, val = self._unpack("qQ", off)
                if tag == 0:  # DT_NULL
                    break
                self.dyn.setdefault(tag, val)

    def _unpack(self, fmt, offset):
        fmt = self.end + fmt
        return struct.unpack_from(fmt, self.data, offset)

    def _offset(self, vaddr):
        for start, offset, size in self.loads:
            if start <= vaddr < start + size:
                return offset + vaddr - start
        raise SystemExit(f"setup.py: {self.path}: address {vaddr:#x} in no PT_LOAD segment")

    def _string(self, strtab, index):
        start = strtab + index
        return self.data[start:self.data.index(b"\0", start)].decode()

    @property
    def arch(self):
        if self.machine not in ARCHES:
            raise SystemExit(f"setup.py: {self.path}: ELF machine {self.machine}, not one a "
                             f"manylinux tag here names ({ARCHES})")
        return ARCHES[self.machine]

    def glibc_needed(self):
        """The newest GLIBC_x.y among the versions the file needs, (0, 0) if none."""
        DT_STRTAB, DT_VERNEED, DT_VERNEEDNUM = 5, 0x6FFFFFFE, 0x6FFFFFFF
        if DT_VERNEED not in self.dyn or DT_STRTAB not in self.dyn:
            return (0, 0)
        strtab = self._offset(self.dyn[DT_STRTAB])
        newest = (0, 0)
        need = self._offset(self.dyn[DT_VERNEED])
        for _ in range(self.dyn.get(DT_VERNEEDNUM, 0)):
            # Elf64_Verneed: vn_version, vn_cnt, vn_file, vn_aux, vn_next.
            _, cnt, _, aux, nxt = self._unpack("HHIII", need)
            entry = need + aux
            for _ in range(cnt):
                # Elf64_Vernaux: vna_hash, vna_flags, vna_other, vna_name, vna_next.
                _, _, _, name, anext = self._unpack("IHHII", entry)
                match = re.fullmatch(r"GLIBC_([0-9]+)\.([0-9]+)(?:\.[0-9]+)?",
                                     self._string(strtab, name))
                if match:
                    newest = max(newest, (int(match.group(1)), int(match.group(2))))
                if not anext:
                    break
                entry += anext
            if not nxt:
                break
            need += nxt
        return newest


def bundle():
    """(directory, glibc (major, minor), manylinux platform tag), or None for the pure wheel."""
    directory = os.environ.get("GPUDOCTOR_BUNDLE", "")
    if not directory:
        return None
    elves = []
    for name in BUNDLED:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise SystemExit(f"setup.py: GPUDOCTOR_BUNDLE={directory} has no {name}")
        elves.append(Elf(path))
    arches = {elf.arch for elf in elves}
    if len(arches) != 1:
        raise SystemExit(f"setup.py: {directory}: binary and library built for {sorted(arches)}")
    floor_text = os.environ.get("GPUDOCTOR_GLIBC_FLOOR", DEFAULT_GLIBC_FLOOR)
    if not re.fullmatch(r"[0-9]+\.[0-9]+", floor_text):
        raise SystemExit(f"setup.py: GPUDOCTOR_GLIBC_FLOOR={floor_text}, not MAJOR.MINOR")
    floor = tuple(int(x) for x in floor_text.split("."))
    glibc = max([floor] + [elf.glibc_needed() for elf in elves])
    return directory, glibc, f"manylinux_{glibc[0]}_{glibc[1]}_{arches.pop()}"


BUNDLE = bundle()


class BuildPy(build_py):
    """Copies the bundled files into the package, or removes the ones a
    bundled build left in setuptools' build directory from a pure wheel."""

    def run(self):
        super().run()
        package = os.path.join(self.build_lib, "gpudoctor")
        for name in BUNDLED + ("_bundle.py",):
            path = os.path.join(package, name)
            if os.path.exists(path):
                os.remove(path)
        if BUNDLE is None:
            return
        directory, glibc, platform = BUNDLE
        for name in BUNDLED:
            shutil.copyfile(os.path.join(directory, name), os.path.join(package, name))
            os.chmod(os.path.join(package, name), 0o755)
        with open(os.path.join(package, "_bundle.py"), "w") as f:
            f.write('"""Written by setup.py: what the bundled gpudoctor binary needs."""\n'
                    f"GLIBC_FLOOR = {glibc!r}\nPLATFORM = {platform!r}\n")


class BdistWheel(bdist_wheel):
    """py3-none-<manylinux> with the bundle: binaries, but no Python ABI."""

    def finalize_options(self):
        super().finalize_options()
        if BUNDLE is not None:
            self.root_is_pure = False

    def get_tag(self):
        if BUNDLE is None:
            return super().get_tag()
        return "py3", "none", BUNDLE[2]


class BinaryDistribution(Distribution):
    """With the bundle the files go to platlib, at the wheel's root (not
    under .data/purelib), as binaries should."""

    def has_ext_modules(self):
        return BUNDLE is not None


setup(version=cmake_project_version(), distclass=BinaryDistribution,
      cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})
