"""XLA's HLO sharding strings, as ``mhlo.sharding`` and XLA's own dumps print them, and the
shards they give each device.

An HLO sharding lays a tensor over devices through a *tile assignment*: an array of device
ids whose first dimensions cut the tensor's dimensions into tiles (a device holds the tile at
its coordinates) and whose trailing dimensions, if any, are subgroups that hold copies
(``last_tile_dim_replicate``, or ``last_tile_dims={manual, replicated}``). Forms accepted
(XLA's ``HloSharding::ToString``, https://github.com/openxla/xla/blob/main/xla/hlo/ir/
hlo_sharding.cc):

* ``{replicated}``, ``{manual}``, ``{maximal device=3}``, ``{unknown}``, ``{unreduced}``;
* ``{devices=[2,1,4]0,1,2,3,4,5,6,7}``: the device ids listed row-major;
* ``{devices=[2,1,4]<=[8]}`` and ``{devices=[1,4,2]<=[2,4]T(1,0)}``: an iota of the
  devices, reshaped to the dims after ``<=`` and transposed by ``T(...)``;
* a suffix ``last_tile_dim_replicate`` or ``last_tile_dims={manual, replicated}``
  (kinds ``manual``, ``replicated``, ``unreduced``);
* ``{{...}, {...}}``: one sharding per element of a tuple.

A dimension of size ``n`` cut into ``t`` tiles gives every device ``ceil(n / t)``
elements; the last tiles are padded (XLA leaves padding undefined: :meth:`shard` fills it
with ``pad_value``). Devices that differ only along ``unreduced`` subgroup dimensions (all
devices, for ``{unreduced}``) hold parts whose sum is their tile: :meth:`shard` gives the
tile to the first of them and zeros to the others, :meth:`unreduced_group` says which
devices sum together.
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

import numpy as np

from shardy_ref.ir.diagnostics import ShardyRefError


class HloShardingError(ShardyRefError):
    """A sharding string we cannot read, or one that does not fit a tensor or devices."""

    def __init__(self, message: str):
        super().__init__(None, message)


@dataclass(frozen=True, slots=True)
class HloSharding:
    """One HLO sharding. ``kind`` is ``replicated``, ``manual``, ``maximal``, ``unknown``,
    ``tiled`` or ``tuple``; a tiled sharding has its tile assignment as ``tile_shape`` and
    ``devices`` (row-major) and its trailing subgroup dimensions' kinds in ``subgroups``."""

    kind: str  # replicated, manual, maximal, unknown, unreduced, tiled or tuple
    tile_shape: tuple[int, ...] = ()
    devices: tuple[int, ...] = ()
    subgroups: tuple[str, ...] = ()  # kinds of the trailing tile dims
    device: int | None = None  # a maximal sharding's device
    elements: tuple[HloSharding, ...] = ()  # a tuple sharding's
    text: str = field(default="", compare=False)  # as read, when read from text

    def __str__(self) -> str:
        if self.text:
            return self.text
        if self.kind == "tuple":
            return "{" + ", ".join(str(e) for e in self.elements) + "}"
        if self.kind == "maximal":
            return f"{{maximal device={self.device}}}"
        if self.kind != "tiled":
            return f"{{{self.kind}}}"
        dims = ",".join(map(str, self.tile_shape))
        text = f"{{devices=[{dims}]{','.join(map(str, self.devices))}"
        if self.subgroups == ("replicated",):
            text += " last_tile_dim_replicate"
        elif self.subgroups:
            text += " last_tile_dims={" + ", ".join(self.subgroups) + "}"
        return text + "}"

    @property
    def data_rank(self) -> int:
        """How many tensor dimensions the tile assignment cuts."""
        return len(self.tile_shape) - len(self.subgroups)

    def tile_counts(self, rank: int) -> tuple[int, ...]:
        """Tiles per tensor dimension (all 1 unless tiled)."""
        if self.kind != "tiled":
            return (1,) * rank
        if self.data_rank != rank:
            raise HloShardingError(f"sharding {self} cuts {self.data_rank} dimension(s), the "
                                   f"tensor has {rank}")
        return self.tile_shape[:rank]

    def local_shape(self, shape) -> tuple[int, ...]:
        """The shape every device holds of a tensor of global ``shape``."""
        counts = self.tile_counts(len(shape))
        return tuple(-(-int(n) // t) for n, t in zip(shape, counts, strict=True))

    @property
    def has_unreduced(self) -> bool:
        return self.kind == "unreduced" or "unreduced" in self.subgroups

    def unreduced_group(self, device: int) -> tuple:
        """A key shared by the devices whose parts sum to one tile: ``device``'s position
        in the tile assignment with its unreduced coordinates left out (``()`` for
        ``{unreduced}``: every device sums with every other)."""
        if self.kind != "tiled":
            return ()
        coords = np.unravel_index(self.devices.index(device), self.tile_shape)
        kinds = (None,) * self.data_rank + self.subgroups
        return tuple(int(c) for c, kind in zip(coords, kinds, strict=True)
                     if kind != "unreduced")

    def holds_the_sum(self, device: int) -> bool:
        """Whether ``device`` is the first of its unreduced group (the one :meth:`shard`
        gives the tile to); every device of a sharding without unreduced parts is."""
        if self.kind == "unreduced":
            return device == 0
        if not self.has_unreduced:
            return True
        coords = np.unravel_index(self.devices.index(device), self.tile_shape)
        return all(int(c) == 0 for c, kind in zip(coords[self.data_rank:], self.subgroups,
                                                  strict=True) if kind == "unreduced")

    def tile_index(self, device: int, rank: int) -> tuple[int, ...] | None:
        """The tile ``device`` holds (its coordinates in the data dims of the tile
        assignment), or None for a device the tile assignment does not name."""
        if self.kind != "tiled":
            return (0,) * rank
        self.tile_counts(rank)
        try:
            flat = self.devices.index(device)
        except ValueError:
            return None
        return tuple(int(c) for c in np.unravel_index(flat, self.tile_shape))[:rank]

    def block(self, device: int, shape) -> tuple[tuple[int, int], ...] | None:
        """The ``[start, stop)`` of each dimension of the global tensor that ``device``
        holds (clipped to the tensor; the rest of its local block is padding)."""
        index = self.tile_index(device, len(shape))
        if index is None:
            return None
        local = self.local_shape(shape)
        return tuple((min(i * n, int(d)), min((i + 1) * n, int(d)))
                     for i, n, d in zip(index, local, shape, strict=True))

    def check_devices(self, num_devices: int) -> None:
        """Raise unless this sharding can lay a value over devices ``0 .. num_devices-1``."""
        if self.kind == "tuple":
            for element in self.elements:
                element.check_devices(num_devices)
        elif self.kind == "maximal" and not 0 <= self.device < num_devices:
            raise HloShardingError(f"sharding {self} names device {self.device}, but there "
                                   f"are {num_devices}")
        elif self.kind == "tiled" and sorted(self.devices) != list(range(num_devices)):
            raise HloShardingError(f"sharding {self} does not lay its tiles over devices 0 .. "
                                   f"{num_devices - 1} once each")
        elif self.kind == "unreduced" and num_devices < 1:
            raise HloShardingError(f"sharding {self} needs devices")
        elif self.kind in ("manual", "unknown"):
            raise HloShardingError(f"a {self} sharding does not say which part of the global "
                                   "value a device holds")

    def shard(self, array: np.ndarray, num_devices: int, pad_value=0) -> list[np.ndarray]:
        """Every device's local value of the global ``array`` (``num_devices`` of them): its
        tile, padded with ``pad_value`` to :meth:`local_shape`. A maximal sharding gives
        its device the whole value and every other device ``pad_value`` of the same shape."""
        self.check_devices(num_devices)
        array = np.asarray(array)
        if self.kind == "tuple":
            raise HloShardingError(f"sharding {self} is a tuple's; the value is one tensor")
        if self.kind == "maximal":
            blank = np.full_like(array, pad_value)
            return [array if d == self.device else blank for d in range(num_devices)]
        local = self.local_shape(array.shape)
        out = []
        for d in range(num_devices):
            ranges = self.block(d, array.shape)
            piece = array[tuple(slice(a, b) for a, b in ranges)]
            if piece.shape != local:
                padded = np.full(local, pad_value, dtype=array.dtype)
                padded[tuple(slice(0, n) for n in piece.shape)] = piece
                piece = padded
            if not self.holds_the_sum(d):
                piece = np.zeros_like(piece)
            out.append(np.array(piece, order="C"))  # ascontiguousarray makes 0-d 1-d
        return out

    def expected(self, array: np.ndarray, num_devices: int) -> list[np.ndarray | None]:
        """What each device should hold of the global ``array``, padding cut off (None: the
        device holds nothing meaningful, as the non-owners of a maximal sharding)."""
        self.check_devices(num_devices)
        array = np.asarray(array)
        if self.kind == "maximal":
            return [array if d == self.device else None for d in range(num_devices)]
        return [array[tuple(slice(a, b) for a, b in self.block(d, array.shape))]
                for d in range(num_devices)]


REPLICATED = HloSharding("replicated")

_TOKEN = re.compile(r"\s*(?:(?P<punct>[{},=\[\]()<]|<=)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<int>-?\d+))")


def parse_hlo_sharding(text: str) -> HloSharding:
    """The :class:`HloSharding` an HLO sharding string spells (see the module docstring);
    raises :class:`HloShardingError` naming what it could not read."""
    reader = _Reader(text)
    sharding = reader.sharding()
    reader.end()
    return dataclasses.replace(sharding, text=text.strip())


class _Reader:
    """A small recursive-descent reader over the tokens of one sharding string."""

    def __init__(self, text: str):
        self.text = text
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                raise self.error(f"unexpected {text[pos:pos + 10]!r}")
            tok = m.group("punct")
            if tok == "<" and text.startswith("<=", m.start("punct")):
                tok, end = "<=", m.start("punct") + 2
            else:
                end = m.end()
            self.tokens.append(tok or m.group("word") or m.group("int"))
            pos = end
        self.at = 0

    def error(self, what: str) -> HloShardingError:
        return HloShardingError(f"cannot read HLO sharding {self.text!r}: {what}")

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise self.error(f"expected {expected or 'more'}, found {tok or 'the end'}")
        self.at += 1
        return tok

    def end(self) -> None:
        if self.peek() is not None:
            raise self.error(f"unexpected {self.peek()!r} after the sharding")

    def ints(self, close: str) -> list[int]:
        values = []
        while self.peek() != close:
            values.append(self.int())
            if self.peek() == ",":
                self.take(",")
        self.take(close)
        return values

    def int(self) -> int:
        tok = self.take()
        if not re.fullmatch(r"-?\d+", tok):
            raise self.error(f"expected a number, found {tok!r}")
        return int(tok)

    def sharding(self) -> HloSharding:
        self.take("{")
        if self.peek() == "{":
            elements = [self.sharding()]
            while self.peek() == ",":
                self.take(",")
                elements.append(self.sharding())
            self.take("}")
            return HloSharding("tuple", elements=tuple(elements))
        if self.peek() == "}":  # an empty tuple
            self.take("}")
            return HloSharding("tuple")
        word = self.take()
        if word in ("replicated", "manual", "unknown", "unreduced"):
            self.take("}")
            return HloSharding(word)
        if word == "maximal":
            self.take("device")
            self.take("=")
            device = self.int()
            self.take("}")
            return HloSharding("maximal", device=device)
        if word != "devices":
            raise self.error(f"unknown sharding kind {word!r}")
        self.take("=")
        self.take("[")
        tile_shape = self.ints("]")
        devices = self.iota() if self.peek() == "<=" else self.device_list()
        if len(devices) != math.prod(tile_shape):
            raise self.error(f"{len(devices)} device(s) for a tile assignment of shape "
                             f"{tile_shape}")
        subgroups = self.subgroups()
        self.take("}")
        if len(subgroups) > len(tile_shape):
            raise self.error("more subgroup dimensions than tile dimensions")
        return HloSharding("tiled", tuple(tile_shape), tuple(devices), tuple(subgroups))

    def iota(self) -> list[int]:
        self.take("<=")
        self.take("[")
        dims = self.ints("]")
        perm = list(range(len(dims)))
        if self.peek() == "T":
            self.take("T")
            self.take("(")
            perm = self.ints(")")
        if sorted(perm) != list(range(len(dims))):
            raise self.error(f"T{tuple(perm)} is not a permutation of {len(dims)} dims")
        count = math.prod(dims)
        return [int(d) for d in np.arange(count).reshape(dims).transpose(perm).reshape(-1)]

    def device_list(self) -> list[int]:
        devices = [self.int()]
        while self.peek() == ",":
            self.take(",")
            devices.append(self.int())
        return devices

    def subgroups(self) -> list[str]:
        if self.peek() == "last_tile_dim_replicate":
            self.take()
            return ["replicated"]
        if self.peek() != "last_tile_dims":
            return []
        self.take()
        self.take("=")
        self.take("{")
        kinds = []
        while self.peek() != "}":
            kind = self.take()
            if kind not in ("manual", "replicated", "unreduced"):
                raise self.error(f"unknown subgroup kind {kind!r}")
            kinds.append(kind)
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return kinds
