"""XLA's own partitioned program, taken out of XLA to be judged by our simulator.

:func:`partition_with_xla` compiles a global-view module (sdy shardings, as jax lowers it)
for its devices with XLA's SPMD partitioner (Shardy, or GSPMD), keeps the HLO module XLA
dumps right after its ``spmd-partitioning`` pass (``xla_dump_hlo_pass_re``, set in the
compile's own debug options; the ``.hlo.pb`` dump, since the text one elides large
constants), and converts it to StableHLO with jaxlib's converter (``hlo_to_stablehlo``),
putting back the mesh device order the converter drops
(:func:`_restore_device_order`). What XLA uses that StableHLO has no op for is rewritten in that
module before it is printed (:func:`_portable`): ``mhlo.copy`` (a copy: its operand),
``mhlo.erf`` (``chlo.erf``), ``mhlo.topk`` (``chlo.top_k``, largest first); anything
else ``mhlo`` is refused by our parser with its location. The entry function's argument and
result shardings come from the executable as HLO sharding strings
(:mod:`.hlo_sharding`).

jax is the optional ``jax`` extra; without it the error names the extra.
"""
from __future__ import annotations

import glob
import os
import re
import tempfile
from dataclasses import dataclass

import numpy as np

from shardy_ref.backends.hlo_sharding import HloSharding, parse_hlo_sharding
from shardy_ref.backends.jax_runtime import BackendError, require_jax, xla_devices
from shardy_ref.ir.stablehlo_attrs import ReplicaGroupMeshAxes

PARTITIONERS = ("shardy", "gspmd")
PASS_DUMPED = "spmd-partitioning"
COLLECTIVES = ("all_gather", "all_reduce", "all_to_all", "collective_permute",
               "collective_broadcast", "reduce_scatter", "send", "recv")


@dataclass(frozen=True, slots=True)
class XlaPartitioned:
    """XLA's per-device program of one module: StableHLO text (``text``), the HLO it was
    converted from (``hlo``), and how the entry function's arguments and results lie over
    the ``num_devices`` devices (partition ``i`` is device ``i``)."""

    text: str
    hlo: str
    arg_shardings: tuple[HloSharding, ...]
    result_shardings: tuple[HloSharding, ...]
    num_devices: int
    partitioner: str
    # ``text`` with XLA's op names as locations (``loc("dot.3")``), and the global program
    # XLA partitioned (every op's ``mhlo.sharding``, same locations); for locating the
    # first wrong value (:mod:`.xla_locate`); empty when unknown
    located: str = ""
    before: str = ""

    def collectives(self) -> dict[str, int]:
        """How many of each collective op the per-device program runs (by StableHLO name)."""
        counts: dict[str, int] = {}
        for name in re.findall(r'"?stablehlo\.([a-z_]+)"?\(?', self.text):
            if name in COLLECTIVES:
                counts[name] = counts.get(name, 0) + 1
        return counts


def partition_with_xla(text: str, num_devices: int, *, partitioner: str = "shardy",
                       devices=None) -> XlaPartitioned:
    """XLA's partitioned program of the module ``text`` for ``num_devices`` devices (the
    first of ``devices``, default jax's), partitioned by XLA's ``partitioner``
    (``shardy`` or ``gspmd``). Raises :class:`BackendError` when XLA refuses the module."""
    if partitioner not in PARTITIONERS:
        raise BackendError(None, f"unknown XLA partitioner {partitioner!r} (one of "
                           f"{', '.join(PARTITIONERS)})")
    jax = require_jax("partitioning with XLA")
    from jaxlib import xla_client as xc

    found = xla_devices(num_devices, devices)
    options = xc.CompileOptions()
    options.num_replicas = 1
    options.num_partitions = num_devices
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = partitioner == "shardy"
    options.device_assignment = xc.DeviceAssignment.create(
        np.array([[d.id for d in found]], dtype=np.int64))
    with tempfile.TemporaryDirectory(prefix="shardy-ref-xla-") as dump:
        debug = build.debug_options
        debug.xla_dump_to = dump
        debug.xla_dump_hlo_pass_re = PASS_DUMPED
        debug.xla_dump_hlo_as_text = True
        debug.xla_dump_hlo_as_proto = True  # the text elides large constants: {...}
        try:
            executable = found[0].client.compile_and_load(text, xc.DeviceList(tuple(found)),
                                                          options)
        except jax.errors.JaxRuntimeError as e:
            raise BackendError(None, f"XLA could not compile the module: {e}") from e
        hlo, proto = _dumped(dump, ".txt"), _module_proto(_dumped(dump, ".hlo.pb"))
        before = _dumped(dump, ".hlo.pb", "before")
    args = tuple(_sharding(xc, s) for s in executable.get_parameter_shardings() or ())
    results = tuple(_sharding(xc, s) for s in executable.get_output_shardings() or ())
    text, located = _to_stablehlo(xc, proto, hlo)
    return XlaPartitioned(text, hlo, args, results, num_devices, partitioner, located,
                          _before_text(xc, before))


def _dumped(directory: str, suffix: str, when: str = "after"):
    """The HLO module XLA dumped ``when`` (after, or before) its partitioning pass (the
    last such dump): text for ``.txt``, else bytes; None for a missing ``before``."""
    paths = sorted(glob.glob(os.path.join(directory, f"*{when}_{PASS_DUMPED}*{suffix}")))
    if not paths:
        if when == "before":
            return None
        raise BackendError(None, f"XLA did not run its {PASS_DUMPED} pass on the module (no "
                           "dump after it): nothing was partitioned")
    with open(paths[-1], "r" if suffix == ".txt" else "rb") as f:
        return f.read()


def _module_proto(hlo_proto: bytes) -> bytes:
    """The ``hlo_module`` field (1) of a serialized ``xla.HloProto``, which is what XLA
    dumps as ``.hlo.pb`` (protobuf wire format: tag, length, bytes)."""
    at = 0
    while at < len(hlo_proto):
        key, at = _varint(hlo_proto, at)
        if key & 7 != 2:
            break
        size, at = _varint(hlo_proto, at)
        if key >> 3 == 1:
            return hlo_proto[at:at + size]
        at += size
    raise BackendError(None, "XLA's dump after partitioning holds no HLO module")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _sharding(xc, op_sharding) -> HloSharding:
    return parse_hlo_sharding(str(xc.HloSharding.from_proto(op_sharding)))


def _to_stablehlo(xc, proto: bytes, hlo: str) -> tuple[str, str]:
    """A serialized HLO module as StableHLO text, by jaxlib's converter, made portable
    (:func:`_portable`), its meshes' device order restored from its text ``hlo``: without
    and with XLA's op names as locations."""
    from shardy_ref.parser import parse_module, print_module

    module = parse_module(_converted(xc, proto), "<XLA's partitioned program>")
    _restore_device_order(module, hlo)
    return print_module(module), print_module(module, debug_info=True)


def _converted(xc, proto: bytes) -> str:
    """jaxlib's StableHLO of a serialized HLO module, with locations, made portable."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    with jax_mlir.make_ir_context():
        module = ir.Module.parse(xc._xla.mlir.hlo_to_stablehlo(proto))
        _portable(ir, module)
        return module.operation.get_asm(enable_debug_info=True)


def _before_text(xc, hlo_proto: bytes | None) -> str:
    """The global program XLA partitioned, as StableHLO with locations ("" when XLA did
    not dump it or our parser cannot read it: it only serves to locate wrong values)."""
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.parser import parse_module, print_module

    if hlo_proto is None:
        return ""
    try:
        module = parse_module(_converted(xc, _module_proto(hlo_proto)), "<XLA's input>")
    except (ShardyRefError, BackendError):
        return ""
    return print_module(module, debug_info=True)


def _portable(ir, module) -> None:
    """Rewrite the ``mhlo`` ops XLA's programs use that have a StableHLO/CHLO twin."""
    found: list = []
    _collect(module.operation, found)
    for op in found:
        name = op.operation.name
        if name == "mhlo.copy":
            op.operation.results[0].replace_all_uses_with(op.operation.operands[0])
        elif name == "mhlo.erf":
            _replace(ir, op, "chlo.erf", {})
        elif name == "mhlo.topk":
            largest = op.operation.attributes["largest"] if "largest" in \
                op.operation.attributes else None
            if largest is not None and not ir.BoolAttr(largest).value:
                continue  # chlo.top_k takes the largest: our parser refuses the mhlo op
            _replace(ir, op, "chlo.top_k", {"k": op.operation.attributes["k"]})
        else:
            continue
        op.operation.erase()


_HLO_GROUPS = re.compile(r"channel_id=(\d+), replica_groups=mesh\[[^\]]*\]"
                         r", device_ids=\(([^()]*(?:\([^()]*\))?)\)")


def _restore_device_order(module, hlo: str) -> None:
    """The replica groups of XLA's collectives over a reordered mesh made explicit in
    ``module``.

    XLA prints such groups as ``mesh['a'=4,'b'=2], device_ids=([2,4]T(1,0)) {'a'}``;
    jaxlib 0.10.2's ``hlo_to_stablehlo`` keeps the axes (``replica_group_mesh_axes``) but
    not the mesh's ``device_ids``, which changes which devices form each group. The device
    order of each collective is read from the HLO text by its channel id and its groups are
    written out as dense ``replica_groups``."""
    orders = {int(channel): _device_ids(ids) for channel, ids in _HLO_GROUPS.findall(hlo)}
    if not orders:
        return
    from shardy_ref.execute.spmd import mesh_axes_groups
    from shardy_ref.ir.replica_groups import groups_attr
    from shardy_ref.ir.sdy_axes import Mesh

    meshes = {op.attributes["sym_name"].value: op.attributes["mesh"]
              for op in module.regions[0].blocks[0] if op.name == "sdy.mesh"}
    for op in module.walk():
        groups = op.attributes.get("replica_groups")
        handle = op.attributes.get("channel_handle")
        if not isinstance(groups, ReplicaGroupMeshAxes) or handle is None \
                or int(handle.handle) not in orders:
            continue
        mesh = meshes[groups.mesh.root]
        op.attributes["replica_groups"] = groups_attr(mesh_axes_groups(
            op, groups, Mesh(mesh.axes, tuple(orders[int(handle.handle)]))))


def _device_ids(text: str) -> list[int]:
    """XLA's ``device_ids=(...)`` of a mesh: an iota ``[dims]T(perm)`` or a list."""
    iota = re.fullmatch(r"\[([\d,]+)\](?:T\(([\d,]+)\))?", text.strip())
    if iota is None:
        return [int(v) for v in text.split(",")]
    dims = [int(v) for v in iota.group(1).split(",")]
    perm = [int(v) for v in iota.group(2).split(",")] if iota.group(2) else \
        list(range(len(dims)))
    return [int(d) for d in np.arange(int(np.prod(dims))).reshape(dims).transpose(perm)
            .reshape(-1)]


def _collect(operation, found: list) -> None:
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name in ("mhlo.copy", "mhlo.erf", "mhlo.topk"):
                    found.append(op)
                _collect(op.operation, found)


def _replace(ir, op, name: str, attributes: dict) -> None:
    """Put op ``name`` with ``op``'s operands, result types and ``attributes`` in place of
    ``op`` (its uses then use the new op's results)."""
    old = op.operation
    new = ir.Operation.create(name, results=[r.type for r in old.results],
                              operands=list(old.operands), attributes=attributes,
                              loc=old.location, ip=ir.InsertionPoint(old))
    for a, b in zip(old.results, new.results, strict=True):
        a.replace_all_uses_with(b)
