"""The ``onemodel`` command line."""

from __future__ import annotations

import argparse
import json
import sys


def _cmd_info(args) -> int:
    from . import compute

    info = compute.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"onemodel {info['version']}")
    print(f"  CPU features:          {', '.join(info['cpu_features']) or '(none detected)'}")
    print(f"  kernel paths available: {', '.join(info['kernel_paths_available'])}")
    print(f"  kernel path best:      {info['kernel_path_best']}")
    print(f"  kernel path in use:    {info['kernel_path']}")
    print(f"  threads:               {info['threads']}")
    print(f"  mode:                  {info['mode']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="onemodel", description="Bit-identical CPU training.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    info = sub.add_parser("info", help="print version, CPU features, kernel paths, threads and mode")
    info.add_argument("--json", action="store_true", help="print the same as JSON")
    info.set_defaults(func=_cmd_info)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
