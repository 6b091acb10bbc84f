"""The op catalog in random programs (``Features.ops``): a step draws one kind of
:mod:`shardy_ref.testing.catalog` uniformly and emits it on a value of the program (or on a
new argument of a shape the kind takes), with randomly sharded new arguments, run-time
indices computed from integer arguments so that they fall inside shards, across shard
boundaries and past the ends, and the mesh's own axes for the sdy kinds."""
from __future__ import annotations

from shardy_ref.testing.catalog import KINDS
from shardy_ref.testing.catalog.site import Site, tensor

KIND_NAMES = tuple(sorted(name for name, k in KINDS.items() if k.in_programs))
TRIES = 3  # values of the program a kind is tried on before a new argument


class ProgramSite(Site):
    """A site emitting into a ``programs.Program``: new arguments get random shardings;
    a run-time index is ``k * step - step`` for an integer argument ``k`` (the simulator's
    integer inputs are 0..3), so it is negative, 0, inside the dimension or past its end."""

    def __init__(self, p):
        super().__init__(p.rng, prefix="c", mesh=tuple(p.mesh))
        self.p = p
        self.count = p.count
        self.funcs = p.funcs

    def arg(self, shape, dtype: str = "f32") -> str:
        return self.p.new_arg(tuple(shape), dtype=dtype)

    def _scaled(self, raw: str, shape, size: int) -> str:
        step = max(1, size // 3 + 1)
        t = tensor(shape, "i32")
        scaled = self.op(f"stablehlo.multiply {raw}, {self.const(step, shape, 'i32')} : {t}")
        return self.op(f"stablehlo.subtract {scaled}, {self.const(step, shape, 'i32')} : {t}")

    def index(self, size: int, window: int = 1) -> str:
        return self._scaled(self.p.new_arg((), sharded=0.0, dtype="i32"), (), size)

    def indices(self, shape, size: int) -> str:
        return self._scaled(self.p.new_arg(tuple(shape), dtype="i32"), tuple(shape), size)


def catalog_step(p) -> bool:
    """Emit one catalog kind into ``p`` (a ``programs.Program``); False if it fits neither
    the values tried nor a new argument of its own shape."""
    kind = KINDS[p.rng.choice(KIND_NAMES)]
    tensors = [v for v in p.values if v[1]]  # the kinds take tensors of rank 1 and more
    candidates = [p.rng.choice(tensors) for _ in range(TRIES)] if tensors else []
    for value, shape in candidates:
        if _emit(p, kind, value, shape):
            return True
    shape = kind.shapes[0]
    return _emit(p, kind, p.new_arg(shape), shape)


def _emit(p, kind, value: str, shape) -> bool:
    site = ProgramSite(p)
    made = kind.build(site, value, tuple(shape))
    if made is None:
        return False
    p.lines.extend("  " + line for line in "\n".join(site.lines).splitlines())
    p.count = site.count
    if made[1]:  # a scalar result stays unused: the other steps take tensors
        p.values.append((made[0], tuple(made[1])))
    p.kinds.append(kind.name)
    return True
