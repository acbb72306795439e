"""bonnie++'s options of the RAID study (`-s 24G:128k -n 256:1000:1000/256`) and -D/-b: the
argv they make and the combinations bonnie++ would refuse or misread."""

from __future__ import annotations

from disklab.core import tools
from disklab.core.tools.base import RunTarget
from disklab.core.vocab.units import KiB, MiB

TARGET = RunTarget(directory="/mnt/t", tag="x", is_root=True)


def argv(**params: object) -> list[str]:
    return list(tools.get_adapter("bonnie").build_command(
        {"size": 64 * MiB, "files": 16, **params}, TARGET).argv)


def after(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_the_studys_size_chunk_and_file_shape_make_its_command_line() -> None:
    args = argv(size=24 * 1024 * MiB, chunk_size=128 * KiB, files=256, max_file_size=1000,
                min_file_size=1000, dirs=256)
    assert after(args, "-s") == "24576:131072"
    assert after(args, "-n") == "256:1000:1000:256"


def test_shorter_file_shapes_and_the_plain_form_stay_as_bonnie_takes_them() -> None:
    assert after(argv(), "-n") == "16" and after(argv(), "-s") == "64"
    assert after(argv(max_file_size=4096), "-n") == "16:4096"
    assert after(argv(max_file_size=4096, dirs=4), "-n") == "16:4096:0:4"


def test_direct_and_no_buffer_flags() -> None:
    args = argv(direct=True, fast=True, no_buffer=True)
    assert "-D" in args and "-b" in args and "-f" in args
    assert "-D" not in argv() and "-b" not in argv()


def test_combinations_bonnie_would_refuse_are_named_by_key() -> None:
    check = tools.get_adapter("bonnie").check
    base = {"size": 64 * MiB, "files": 16}
    assert [k for k, _ in check({**base, "direct": True})] == ["direct"]
    assert [k for k, _ in check({**base, "min_file_size": 10, "max_file_size": 5})] == [
        "min_file_size"]
    assert [k for k, _ in check({**base, "dirs": 4})] == ["dirs"]
    assert [k for k, _ in check({**base, "files": 0, "max_file_size": 5})] == ["files"]
    assert [k for k, _ in check({**base, "chunk_size": 128 * MiB})] == ["chunk_size"]
    assert check({**base, "direct": True, "fast": True, "chunk_size": 128 * KiB}) == []
