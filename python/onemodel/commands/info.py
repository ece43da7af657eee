"""``onemodel info``: version, CPU features, kernel paths, threads, mode."""

from __future__ import annotations

import json


def run(args) -> int:
    from .. import compute

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
