"""Ray, imported on first use, and the driver's connection to a cluster.

Ray is an optional dependency (``pip install 'onemodel[distributed]'``):
nothing here imports it until a cluster is needed, and then a missing Ray is
an ImportError that names the extra.
"""

from __future__ import annotations

import logging
import os

EXTRA = "pip install 'onemodel[distributed]'"

#: The object store of a local cluster: weights, gradients and batches of
#: one step are what it holds, so a modest size suffices (Ray's default is
#: 30 % of the machine's memory).
LOCAL_OBJECT_STORE_BYTES = 1 << 30


def require():
    """The ``ray`` module, or an ImportError naming the extra to install."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - exercised in a subprocess test
        raise ImportError(f"onemodel.distributed needs Ray, which is not installed: {EXTRA}") from e
    return ray


def connect(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect this process to Ray.

    ``address=None`` starts a local cluster whose services listen on the
    loopback address only; ``'auto'`` or ``'host:port'`` joins a running
    cluster. When Ray is already initialized in this process it is used as it
    is. Returns True when this call initialized Ray (the caller then calls
    ``disconnect`` when done)."""
    ray = require()
    if ray.is_initialized():
        return False
    if address is None:
        # Ray replaces 127.0.0.1 by the machine's outward address unless its
        # "cluster" support is off (the setting it uses on macOS and Windows);
        # with it off, every service of the local cluster binds to 127.0.0.1.
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False
        ray.init(num_cpus=num_cpus if num_cpus is not None else os.cpu_count(), include_dashboard=False,
                 _node_ip_address="127.0.0.1", object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                 logging_level=logging.WARNING)
    else:
        _check_reachable(address)
        ray.init(address=address, logging_level=logging.WARNING)
    return True


def _check_reachable(address: str, timeout: float = 10.0) -> None:
    """A ConnectionError when nothing listens at a ``host:port`` address
    (``'auto'`` with RAY_ADDRESS set counts as that address): Ray itself
    retries such an address for many minutes before giving up."""
    import socket

    if address == "auto":
        address = os.environ.get("RAY_ADDRESS", "auto")
    if address == "auto" or "://" in address or ":" not in address:
        return  # Ray's own lookup (the running cluster's file, a client URL) fails fast
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as e:
        raise ConnectionError(f"no Ray cluster answers at {address} ({e})") from None


def disconnect() -> None:
    """Leave Ray (a local cluster this process started stops with it)."""
    ray = require()
    if ray.is_initialized():
        ray.shutdown()


def node_address() -> str:
    """The address of the node this process runs on."""
    ray = require()
    return ray.util.get_node_ip_address()


def node_id() -> str:
    """Ray's id of the node (machine) this process runs on."""
    ray = require()
    return ray.get_runtime_context().get_node_id()
