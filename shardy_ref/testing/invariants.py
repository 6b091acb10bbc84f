"""The invariants a Shardy implementation must keep, as plain functions over module text:
each returns None when it holds (or a reason when it does not apply, e.g. the partitioner
refused the program with a located error) and raises :class:`InvariantViolation` naming
itself and what broke.
:data:`INVARIANTS` maps their names to them; ``shardy-ref fuzz`` runs them on random programs
(:func:`shardy_ref.testing.programs.programs`).

Every invariant takes a ``subject=`` (:class:`Subject`): the implementation under test, by
default this reference. Another implementation (a partitioner, a compiler fork) plugs in its
own printer, verifier, pass pipeline runner or simulator and is judged by the same checks;
the tests also plug in deliberately broken ones so that no invariant passes vacuously.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.func_attrs import function_type
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.utils import is_equivalent
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
from shardy_ref.propagate.sharding_projection import PrefixStatus, axis_list_prefix_status

PROPAGATION_PIPELINE = "sdy-propagation-pipeline"
# the propagation stage of sdy-propagation-pipeline: its import passes and user-priority
# propagation, without the export passes that rewrite shardings for the partitioner
PROPAGATION_STAGE = ("sdy-import-pipeline,sdy-apply-sharding-constraints,"
                     "sdy-sharding-group-import,sdy-user-priority-propagate")
# the same, with the data-flow edges it adds sunk into their ops again, so that its output is
# valid input for another run (sdy-add-data-flow-edges refuses a data-flow op's results
# that already have edges)
PROPAGATION_STAGE_SUNK = PROPAGATION_STAGE + ",func.func(sdy-sink-data-flow-edges)"
EXPLICIT_RESHARDS = "sdy-insert-explicit-reshards{enable-full-version=true}"
RESHARD_TO_COLLECTIVES = "sdy-reshard-to-collectives"
COLLECTIVES = frozenset({"sdy.all_gather", "sdy.all_slice", "sdy.all_to_all",
                         "sdy.collective_permute", "sdy.all_reduce", "sdy.reduce_scatter"})
RTOL = 1e-5


class InvariantViolation(AssertionError):
    """An invariant does not hold: ``name`` is the invariant (a key of :data:`INVARIANTS`),
    ``message`` says what broke, naming the value or op."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


# -- the implementation under test ----------------------------------------------------------
def _parse(text: str):
    from shardy_ref.parser import parse_module
    return parse_module(text, "<fuzz>")


def _canonical(text: str) -> str:
    from shardy_ref.parser import print_module
    return print_module(_parse(text))


def _verify(text: str) -> None:
    from shardy_ref.ir.verify import verify_module
    verify_module(_parse(text))


def _run_pipeline(text: str, pipeline: str) -> str:
    """Parse, verify, run ``pipeline`` verifying after every pass (as sdy_opt does), print."""
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import print_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    module = _parse(text)
    verify_module(module)
    PassManager(parse_pipeline(pipeline), verify=verify_module).run(module, PassContext())
    return print_module(module)


def _run(text: str, *arrays) -> tuple:
    from shardy_ref.execute import run
    return run(text, *arrays)


def _simulate(text: str, *arrays, propagate: bool | None = None) -> tuple:
    from shardy_ref.execute import compile_spmd
    return compile_spmd(text, propagate=propagate).run(*arrays)


@dataclass(frozen=True, slots=True)
class Subject:
    """The implementation the invariants judge. ``canonical(text)`` is print(parse(text));
    ``verify(text)`` raises on an invalid module; ``run_pipeline(text, passes)`` runs an
    sdy_opt pass pipeline and prints the result; ``run(text, *arrays)`` runs ``@main`` on
    one device and ``simulate(text, *arrays, propagate=None)`` partitioned on every device
    of its mesh, both on global arrays."""

    canonical: Callable[[str], str] = _canonical
    verify: Callable[[str], None] = _verify
    run_pipeline: Callable[[str, str], str] = _run_pipeline
    run: Callable[..., tuple] = _run
    simulate: Callable[..., tuple] = _simulate


REFERENCE = Subject()


# -- reading modules ------------------------------------------------------------------------
def _main(module):
    funcs = [op for op in module.walk() if op.name == "func.func"]
    named = [f for f in funcs if f.attributes["sym_name"].value == "main"]
    return (named or funcs)[0]


def user_shardings(text: str) -> list[tuple[str, TensorSharding | None]]:
    """The user shardings of ``@main``, in order, each with a name for messages: its
    arguments, its results, then every ``sdy.sharding_constraint`` (None where unsharded)."""
    return _signature_shardings(text) + _constraint_shardings(text)


def _grouped_user_shardings(text: str) -> set[str]:
    """The names (as :func:`user_shardings` gives them) of the arguments and constraints
    in a sharding group: the group makes its members share one sharding, which may
    override one member's own (upstream semantics), so propagation need not extend it."""
    module = _parse(text)
    members = {v for vs in _group_members(module).values() for v in vs}
    func = _main(module)
    names = {f"argument {i}" for i, a in enumerate(func.regions[0].blocks[0].args)
             if a in members}
    constraints = [o for o in func.walk() if o.name == "sdy.sharding_constraint"]
    names |= {f"sharding_constraint {i}" for i, o in enumerate(constraints)
              if o.results[0] in members}
    return names


def _signature_shardings(text: str) -> list[tuple[str, TensorSharding | None]]:
    func = _main(_parse(text))
    out = [(f"argument {i}", get_sharding(a))
           for i, a in enumerate(func.regions[0].blocks[0].args)]
    out += [(f"result {i}", get_func_result_sharding(func, i))
            for i in range(len(function_type(func).results))]
    return out


def _constraint_shardings(text: str) -> list[tuple[str, TensorSharding]]:
    return [(f"sharding_constraint {i}", op.attributes["sharding"]) for i, op in
            enumerate(o for o in _main(_parse(text)).walk()
                      if o.name == "sdy.sharding_constraint")]


def _extension_error(before: TensorSharding, after: TensorSharding | None) -> str | None:
    """Why ``after`` does not keep the user's ``before`` (None if it does)."""
    if after is None:
        return "the sharding was dropped"
    if {a.name for a in after.replicated_axes} != {a.name for a in before.replicated_axes}:
        return "the replicated axes changed"
    replicated = {a.name for a in before.replicated_axes}
    for d, (old, new) in enumerate(zip(before.dim_shardings, after.dim_shardings,
                                       strict=True)):
        if old.is_closed and (new.axes != old.axes or not new.is_closed):
            return f"closed dimension {d} changed"
        if not old.is_closed and axis_list_prefix_status(old.axes, new.axes) is \
                PrefixStatus.NOT_A_PREFIX:
            return f"open dimension {d} was not extended at its end"
        if any(a.name in replicated for a in new.axes[len(old.axes):]):
            return f"a replicated axis was added to dimension {d}"
    return None


# -- the invariants -------------------------------------------------------------------------
def roundtrip(text: str, *, subject: Subject = REFERENCE) -> None:
    """Printing is a fixpoint of parse-then-print: print(parse(x)) == print(parse(print(
    parse(x)))), so the printed form is canonical (the "Grammar" of
    https://openxla.org/shardy/sharding_representation and the assembly formats of
    https://openxla.org/shardy/sdy_dialect, which upstream's printer and parser share)."""
    once = subject.canonical(text)
    twice = subject.canonical(once)
    if once != twice:
        raise InvariantViolation("roundtrip", "print(parse(x)) changes when parsed and "
                                 f"printed again:\n{_first_difference(once, twice)}")


def verifier_sound(text: str, *, subject: Subject = REFERENCE) -> None:
    """A generated program is valid by construction (axes of the mesh used once, replicated
    axes in mesh order, sub-axes that fit: the invariants of
    https://openxla.org/shardy/sharding_representation and
    https://openxla.org/shardy/sdy_dialect#tensorshardingattr), so the verifier must accept
    it."""
    try:
        subject.verify(text)
    except Exception as e:
        raise InvariantViolation("verifier_sound", f"a valid program is rejected: {e}") \
            from e


def propagation_extends_user_shardings(text: str, *, subject: Subject = REFERENCE,
                                       pipeline: str = PROPAGATION_STAGE) -> None:
    """Propagation keeps every user sharding ("Input/output shardings" and "Sharding
    Constraint" in https://openxla.org/shardy/compiler_api: ``@main``'s arguments and
    results, and each sharding constraint, which some constraint of the output must keep;
    not the members of a sharding group, which share the group's sharding): a closed
    dimension is unchanged, an open one is only extended at its end ("Open/closed
    dimensions" in https://openxla.org/shardy/sharding_representation), explicitly
    replicated axes stay replicated and never shard a dimension ("Explicitly replicated
    axes"). Checked on the propagation stage of ``sdy-propagation-pipeline``: its export
    passes legitimately rewrite input/output shardings for the partitioner (drop replicated
    axes, sub-axes, non-divisible axes)."""
    out = subject.run_pipeline(text, pipeline)
    name = "propagation_extends_user_shardings"
    grouped = _grouped_user_shardings(text)
    before, after = _signature_shardings(text), _signature_shardings(out)
    if len(before) != len(after):
        raise InvariantViolation(name, f"{len(before)} arguments and results before "
                                 f"propagation, {len(after)} after")
    for (what, old), (_, new) in zip(before, after, strict=True):
        why = None if old is None or what in grouped else _extension_error(old, new)
        if why is not None:
            raise InvariantViolation(name, f"{what}: {why}: {old} became {new}")
    # the import passes add constraints of their own (for sharding groups, for operands of
    # manual computations: real Shardy too), so each user constraint is looked for
    kept = [new for _, new in _constraint_shardings(out)]
    for what, old in _constraint_shardings(text):
        if what in grouped:
            continue
        if not any(new.rank == old.rank and _extension_error(old, new) is None
                   for new in kept):
            raise InvariantViolation(name, f"{what}: no constraint after propagation "
                                     f"keeps {old}")


def propagation_fixpoint(text: str, *, subject: Subject = REFERENCE,
                         pipeline: str = PROPAGATION_STAGE_SUNK) -> str | None:
    """Propagation reaches a fixpoint: running it on its own output decides the same
    sharding for every value (https://openxla.org/shardy/propagation: shardings only grow,
    and propagation stops when no step applies). The ops must be the same; their operands
    may be rewired, as real Shardy (jaxlib 0.10.2) does when the first run's DCE left a
    chain of sharding constraints with one user each, which
    ``sdy-apply-sharding-constraints`` then extends to the input's later uses ("Sharding
    Constraint" in https://openxla.org/shardy/compiler_api). Checked on the propagation
    stage: the export passes of the whole pipeline drop sub-axes and non-divisible axes from
    ``@main``'s shardings, which can unblock propagation on a second run (jaxlib does the
    same, e.g. on random_program(286))."""
    once = subject.run_pipeline(text, pipeline)
    if _group_disagrees(once):
        return ("a sharding group's members are sharded differently after "
                "one run, which the next run's sdy-sharding-group-import meets with open "
                "constraints (real Shardy too)")
    twice = subject.run_pipeline(once, pipeline)
    if once == twice:
        return None
    before, after = value_shardings(once), value_shardings(twice)
    if len(before) != len(after):
        raise InvariantViolation("propagation_fixpoint", f"{len(before)} values after one "
                                 f"run, {len(after)} after two:\n"
                                 f"{_first_difference(once, twice)}")
    for (name, old), (other, new) in zip(before, after, strict=True):
        if name != other or old != new:
            raise InvariantViolation("propagation_fixpoint", f"a second run changed {name} "
                                     f"{old} to {other} {new}")
    return None


def _group_members(module) -> dict:
    """Group id -> the values ``sdy.sharding_group`` ops put in it, in ``@main``."""
    groups: dict = {}
    for op in _main(module).walk():
        if op.name == "sdy.sharding_group":
            groups.setdefault(op.attributes["group_id"].value, []).append(op.operands[0])
    return groups


def _group_disagrees(text: str) -> bool:
    return any(len({get_sharding(v) for v in members}) > 1
               for members in _group_members(_parse(text)).values())


def value_shardings(text: str) -> list[tuple[str, object]]:
    """Every value of ``@main`` in order, named by its position and op (arguments, op
    results, function results), with its sharding; constraints and reshards with theirs."""
    func = _main(_parse(text))
    out = [(f"argument {i}", get_sharding(a))
           for i, a in enumerate(func.regions[0].blocks[0].args)]
    for n, op in enumerate(func.walk()):
        if op is not func:
            out += [(f"result {i} of op {n} ({op.name})", get_sharding(r))
                    for i, r in enumerate(op.results)]
            if "sharding" in op.attributes:
                out.append((f"op {n} ({op.name})", op.attributes["sharding"]))
    out += [(f"function result {i}", get_func_result_sharding(func, i))
            for i in range(len(function_type(func).results))]
    return out


def reshard_reaches_target(text: str, *, subject: Subject = REFERENCE) -> str | None:
    """After ``sdy-propagation-pipeline`` and ``sdy-insert-explicit-reshards`` (full
    version), ``sdy-reshard-to-collectives`` leaves no ``sdy.reshard`` (sdy_dialect
    ``#sdyreshard-sdyreshardop``) and every operand of every other op is sharded as that op
    expected before the lowering: the last collective of each chain has the reshard's
    sharding as its ``out_sharding`` (https://openxla.org/shardy/sdy_dialect#operations),
    and each returned value has the function's result sharding. Not checked on a program
    with an ``sdy.propagation_barrier``: XLA lowers barriers to their operands before these
    passes, and upstream's explicit reshards do not look through one (a returned barrier
    keeps its own sharding, in real Shardy too)."""
    name = "reshard_reaches_target"
    propagated = subject.run_pipeline(text, PROPAGATION_PIPELINE)
    if "sdy.propagation_barrier" in propagated:
        return "a propagation barrier reaches the export passes"
    explicit = subject.run_pipeline(propagated, EXPLICIT_RESHARDS)
    lowered = subject.run_pipeline(explicit, RESHARD_TO_COLLECTIVES)
    module = _parse(lowered)
    left = [op for op in module.walk() if op.name == "sdy.reshard"]
    if left:
        raise InvariantViolation(name, f"{len(left)} sdy.reshard left, the first at "
                                 f"{left[0].location}")
    want = _expected_operand_shardings(_parse(explicit), skip=COLLECTIVES | {"sdy.reshard"})
    got = _expected_operand_shardings(module, skip=COLLECTIVES, follow=False)
    if [w[0] for w in want] != [g[0] for g in got]:
        raise InvariantViolation(name, "the lowering changed ops other than reshards")
    for (op_name, i, expected), (_, _, actual) in zip(want, got, strict=True):
        if not is_equivalent(expected, actual):
            raise InvariantViolation(name, f"operand {i} of {op_name} is sharded {actual}, "
                                     f"expected {expected}")
    _check_returns(name, module)
    return None


def _expected_operand_shardings(module, skip, follow: bool = True) -> list[tuple]:
    """Per op of ``@main`` (those named in ``skip`` left out) and operand: the sharding the
    operand arrives with; through a reshard (``follow``) the reshard's target."""
    out = []
    for op in _main(module).walk():
        if op.name in skip or op.name == "func.func":
            continue
        for i, v in enumerate(op.operands):
            owner = getattr(v, "op", None)
            reshard = follow and owner is not None and owner.name == "sdy.reshard"
            out.append((op.name, i, owner.attributes["sharding"] if reshard
                        else get_sharding(v)))
    return out


def _check_returns(name: str, module) -> None:
    func = _main(module)
    ret = func.regions[0].blocks[0].ops[-1]
    for i, v in enumerate(ret.operands):
        want = get_func_result_sharding(func, i)
        if want is not None and not is_equivalent(get_sharding(v), want):
            raise InvariantViolation(name, f"result {i} is returned sharded "
                                     f"{get_sharding(v)}, the function says {want}")


def collective_algebra(text: str, *, subject: Subject = REFERENCE) -> None:
    """Collectives compose as their algebra says (https://openxla.org/shardy/sdy_dialect:
    ``all_slice`` and ``all_gather`` are dual; ``all_to_all`` moves a dimension's minor axes
    to another): on the program's mesh and each argument of ``@main``, ``all_gather`` after
    ``all_slice`` of the same axes, ``all_slice`` after ``all_gather`` of an argument's
    minor axes, and an ``all_to_all`` there and back give the input back, on one device
    (``run``) and partitioned on every device (``simulate``)."""
    module = _parse(text)
    mesh_ops = [op for op in module.walk() if op.name == "sdy.mesh"]
    if not mesh_ops:
        return
    mesh_op = mesh_ops[0]
    mesh, mesh_name = mesh_op.attributes["mesh"], mesh_op.attributes["sym_name"].value
    rng = random.Random(text.encode("utf-8", "surrogateescape"))  # a comment may hold any byte
    for arg in _main(module).regions[0].blocks[0].args:
        shape = tuple(arg.type.shape)
        sharding = _closed(get_sharding(arg), mesh_name, len(shape))
        if any(n % d.sharded_size(mesh) for n, d in zip(shape, sharding.dim_shardings,
                                                          strict=True)):
            continue  # the partitioner refuses non-divisible function inputs
        for case in collective_cases(mesh, mesh_name, shape, sharding, rng):
            _check_identity(case, shape, subject)


def _closed(sharding: TensorSharding | None, mesh_name: str, rank: int) -> TensorSharding:
    if sharding is None:
        return TensorSharding.fully_closed(mesh_name, rank)
    dims = tuple(DimensionSharding(d.axes) for d in sharding.dim_shardings)
    return TensorSharding(mesh_name, dims, sharding.replicated_axes)


def collective_cases(mesh: Mesh, mesh_name: str, shape, sharding: TensorSharding,
                     rng: random.Random) -> list[str]:
    """Modules whose ``@main`` takes a tensor sharded ``sharding`` and returns it through
    an all_slice then all_gather of free axes, an all_gather then all_slice of each
    dimension's minor axes, and an all_to_all of a dimension's minor axes there and back."""
    cases = []
    slicing = _slicing_axes(mesh, shape, sharding, rng)
    if any(slicing):
        cases.append(_identity_module(mesh, mesh_name, shape, sharding,
                                      _add_axes(sharding, slicing),
                                      ("all_slice", _lists(slicing)),
                                      ("all_gather", _lists(slicing))))
    gathering = [list(d.axes[-rng.randint(0, len(d.axes)):]) if d.axes else []
                 for d in sharding.dim_shardings]
    if any(gathering):
        cases.append(_identity_module(mesh, mesh_name, shape, sharding,
                                      _drop_axes(sharding, gathering),
                                      ("all_gather", _lists(gathering)),
                                      ("all_slice", _lists(gathering))))
    move = _all_to_all_move(mesh, shape, sharding, rng)
    if move is not None:
        src, tgt, axes = move
        moved = [axes if d == tgt else [] for d in range(len(shape))]
        middle = _add_axes(_drop_axes(sharding, [axes if d == src else []
                                                 for d in range(len(shape))]), moved)
        there = "[{" + ", ".join(map(str, axes)) + f"}}: {src}->{tgt}]"
        back = "[{" + ", ".join(map(str, axes)) + f"}}: {tgt}->{src}]"
        cases.append(_identity_module(mesh, mesh_name, shape, sharding, middle,
                                      ("all_to_all", there), ("all_to_all", back)))
    return cases


def _slicing_axes(mesh: Mesh, shape, sharding: TensorSharding, rng: random.Random):
    """Free axes of ``mesh`` (used nowhere in ``sharding``) put on random dimensions
    they still divide."""
    used = {a.name for a in sharding.all_axes()}
    free = [a for a in mesh.axes if a.name not in used and a.size > 1]
    rng.shuffle(free)
    slicing: list[list[AxisRef]] = [[] for _ in shape]
    for axis in free:
        d = rng.randrange(len(shape) + 1)
        if d < len(shape) and shape[d] % (sharding.dim_shardings[d].sharded_size(mesh)
                                          * _size(slicing[d], mesh) * axis.size) == 0:
            slicing[d].append(AxisRef(axis.name))
    return slicing


def _all_to_all_move(mesh: Mesh, shape, sharding: TensorSharding, rng: random.Random):
    """(source dim, target dim, the source's minor axes) that the target dimension still
    divides, or None."""
    dims = sharding.dim_shardings
    sources = [d for d, ds in enumerate(dims) if ds.axes]
    if not sources or len(shape) < 2:
        return None
    src = rng.choice(sources)
    axes = list(dims[src].axes[-rng.randint(1, len(dims[src].axes)):])
    for tgt in rng.sample(range(len(shape)), len(shape)):
        last = dims[tgt].axes[-1:]
        if tgt != src and not (last and last[0].name == axes[0].name) and shape[tgt] % (
                dims[tgt].sharded_size(mesh) * _size(axes, mesh)) == 0:
            return src, tgt, axes
    return None


def _lists(axes) -> str:
    return "[" + ", ".join("{" + ", ".join(str(a) for a in d) + "}" for d in axes) + "]"


def _size(axes, mesh: Mesh) -> int:
    return int(np.prod([a.size(mesh) for a in axes], dtype=np.int64)) if axes else 1


def _add_axes(sharding: TensorSharding, axes) -> TensorSharding:
    dims = tuple(DimensionSharding((*d.axes, *extra))
                 for d, extra in zip(sharding.dim_shardings, axes, strict=True))
    return TensorSharding(sharding.mesh_or_ref, dims, sharding.replicated_axes)


def _drop_axes(sharding: TensorSharding, axes) -> TensorSharding:
    dims = tuple(DimensionSharding(d.axes[:len(d.axes) - len(extra)])
                 for d, extra in zip(sharding.dim_shardings, axes, strict=True))
    return TensorSharding(sharding.mesh_or_ref, dims, sharding.replicated_axes)


def _identity_module(mesh: Mesh, mesh_name: str, shape, outer: TensorSharding,
                     middle: TensorSharding, first, second) -> str:
    """``@main`` applying collective ``first`` (op name, printed axes or params) into
    ``middle``, then ``second`` back into ``outer``."""
    t = "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"
    return (f"sdy.mesh @{mesh_name} = {mesh.params()}\n"
            f"func.func @main(%arg0: {t} {{sdy.sharding = {outer}}}) -> "
            f"({t} {{sdy.sharding = {outer}}}) {{\n"
            f"  %0 = sdy.{first[0]} {first[1]} %arg0 out_sharding={middle.params()} : {t}\n"
            f"  %1 = sdy.{second[0]} {second[1]} %0 out_sharding={outer.params()} : {t}\n"
            f"  return %1 : {t}\n}}\n")


def _check_identity(module: str, shape, subject: Subject) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    for how, out in (("run", subject.run(module, x)),
                     ("simulate", subject.simulate(module, x, propagate=False))):
        if not np.array_equal(out[0], x):
            raise InvariantViolation("collective_algebra", f"{how} of\n{module}does not "
                                     "give its input back")


def per_device_equals_single_device(text: str, *, subject: Subject = REFERENCE,
                                    seed: int = 0) -> str | None:
    """Partitioning keeps a program's meaning: the per-device program run on every device of
    the mesh (``simulate``, after propagation) gives the global results of the unpartitioned
    program on one device (``run``) on the same seeded inputs; integers exactly, floats
    within a relative 1e-5 of the result's scale (a sharding says where data lives, never
    what is computed: https://openxla.org/shardy/sharding_representation). A program the
    partitioner refuses with a located PassError (as upstream refuses it) is not checked:
    the reason is returned. So is a mismatch of a result that is ill-conditioned at these
    inputs: the single-device result itself moves when the float inputs move by one part in
    a million (summing in another order, as partitioned contractions do, moves it alike), by
    more than a tenth of the tolerance, and the partitioned result is within ten times that;
    or an integer or non-finite element flips (a comparison or a rounding after a
    contraction)."""
    from shardy_ref.execute.inputs import random_arguments

    func = _main(_parse(text))
    arrays = random_arguments([a.type for a in func.regions[0].blocks[0].args], seed)
    want = subject.run(text, *arrays)
    try:
        got = subject.simulate(text, *arrays)
    except PassError as e:  # a located refusal, as upstream's partitioner refuses
        return f"refused: {e.message.splitlines()[0]}"
    if len(got) != len(want):
        raise InvariantViolation("per_device_equals_single_device",
                                 f"{len(got)} results partitioned, {len(want)} on one device")
    moved = None
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        why = _mismatch(np.asarray(g), np.asarray(w))
        if not why:
            continue
        if moved is None:
            moved = [subject.run(text, *_perturbed(arrays, seed + k))
                     for k in range(PERTURBED_RUNS)]
        excuse = _within_conditioning(np.asarray(g), np.asarray(w),
                                      [np.asarray(m[i]) for m in moved])
        if excuse:
            return f"result {i} of the single-device run is ill-conditioned: {excuse}"
        raise InvariantViolation("per_device_equals_single_device", f"result {i}: {why}")
    return None


PERTURBATION = 2.0 ** -20  # about one part in a million
PERTURBED_RUNS = 4  # the largest movement of these many runs measures the conditioning


def _perturbed(arrays: list, seed: int) -> list:
    """``arrays`` with each float element moved by :data:`PERTURBATION` of itself, up or
    down at random."""
    rng = np.random.default_rng(seed + 1)
    out = []
    for a in arrays:
        a = np.asarray(a)
        if np.issubdtype(a.dtype, np.floating):
            sign = rng.choice(np.array([-1.0, 1.0]), a.shape)
            a = (a * (1 + PERTURBATION * sign)).astype(a.dtype)
        out.append(a)
    return out


def _within_conditioning(got: np.ndarray, want: np.ndarray, moved: list) -> str | None:
    """Why a mismatch of ``got`` is excused (None if it is not): the single-device results
    ``moved`` on inputs moved by one part in a million are themselves unstable, as summing
    in another order would make them (an integer or a non-finite pattern that flips;
    floats that move), and ``got`` stays within ten times the largest movement."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return None
    if not np.issubdtype(want.dtype, np.inexact) or \
            not np.array_equal(np.isfinite(got), np.isfinite(want)):
        flips = next((why for m in moved if (why := _mismatch(m, want))), None)
        return (f"with the inputs moved by one part in a million, {flips}") if flips \
            else None
    finite = np.isfinite(want) & np.all([np.isfinite(m) for m in moved], axis=0)
    if not finite.any():
        return None
    scale = max(float(np.abs(want[finite]).max()), 1.0)
    movement = max(float(np.abs(m[finite] - want[finite]).max()) for m in moved)
    err = float(np.abs(got[finite] - want[finite]).max())
    if movement > RTOL * scale / 10 and err <= 10 * movement:
        return (f"it moves by {movement:.3g} when its inputs move by one part in a million, "
                f"and the partitioned result is {err:.3g} away")
    return None


def _mismatch(got: np.ndarray, want: np.ndarray) -> str | None:
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} partitioned, {want.dtype}{list(want.shape)} " \
            "on one device"
    if not np.issubdtype(want.dtype, np.inexact):
        bad = int(np.sum(got != want))
        return f"{bad} elements differ" if bad else None
    finite = np.isfinite(want)
    if not np.array_equal(finite, np.isfinite(got)) or \
            not np.array_equal(got[~finite], want[~finite], equal_nan=True):
        return "the non-finite elements differ"
    scale = max(float(np.abs(want[finite]).max()) if finite.any() else 0.0, 1.0)
    err = float(np.abs(got[finite] - want[finite]).max()) if finite.any() else 0.0
    return f"largest error {err:.3g} over {RTOL} x {scale:.3g}" if err > RTOL * scale \
        else None


def _first_difference(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False)):
        if x != y:
            return f"line {i + 1}:\n- {x}\n+ {y}"
    return f"{len(a.splitlines())} lines, then {len(b.splitlines())}"


INVARIANTS: dict[str, Callable[..., str | None]] = {
    "roundtrip": roundtrip,
    "verifier_sound": verifier_sound,
    "propagation_extends_user_shardings": propagation_extends_user_shardings,
    "propagation_fixpoint": propagation_fixpoint,
    "reshard_reaches_target": reshard_reaches_target,
    "collective_algebra": collective_algebra,
    "per_device_equals_single_device": per_device_equals_single_device,
}
