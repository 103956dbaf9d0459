"""Re-save checkpoints in this version's format, with the checksum that loading verifies.

    python -m mlm_lib.experiments.upgrade runs/smoke/model.pt mlm_lib/course/assets/checkpoints/*.pt

A checkpoint of format 1 (written before checkpoints carried one) has no checksum: it still loads, but a damaged copy of it
would load too. This rewrites each file in place (through a temporary file and a rename) with the format's name
and the checksum added; every tensor stays bit for bit what it was (tests/test_checkpoints.py proves it).
"""
from __future__ import annotations

import argparse

from ..checkpoints import upgrade
from ._run import command


@command
def main(argv=None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE", help="checkpoints written by mlm_lib.save_checkpoint")
    args = parser.parse_args(argv)
    done = []
    for path in args.files:
        try:
            done.append(upgrade(path))
        except (ValueError, FileNotFoundError) as err:
            parser.error(str(err))
        print(done[-1])
    return done


if __name__ == "__main__":
    main()
