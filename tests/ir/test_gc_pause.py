"""``collector_paused``: the cyclic GC off in paused sections (the parser, the pass manager's
verification step), restored by the last one to end, and no walk over the frozen heap when
the pass manager resumes it."""
from __future__ import annotations

import gc
import threading

import shardy_ref.ir.gc_pause as gc_pause
from shardy_ref.ir.gc_pause import collector_paused
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline


def test_nested_sections_restore_the_collector_once():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused(promote=False):
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_sections_in_two_threads_share_one_pause():
    """The collector is process-wide: it comes back only when both sections ended."""
    inside, release = threading.Event(), threading.Event()
    seen = []

    def other():
        with collector_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    with collector_paused():
        pass
    seen.append(gc.isenabled())  # the other thread's section still runs
    release.set()
    thread.join(10)
    assert seen == [False] and gc.isenabled()


def test_the_pass_manager_verifies_with_the_collector_paused_and_no_freeze_count(monkeypatch):
    """Verification after a pass allocates its memo and the IR snapshot, never garbage; the
    collector is paused meanwhile. Asking ``gc.get_freeze_count`` walks every frozen object
    (the whole module while a pipeline runs), so the pass manager never asks it."""
    states = []
    counted = []
    monkeypatch.setattr(gc_pause.gc, "get_freeze_count",
                        lambda: counted.append(1) or 0)

    def verify(op):
        states.append(gc.isenabled())
        verify_module(op)

    module = parse_module("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                          "  %b = stablehlo.add %a, %a : tensor<4xf32>\n"
                          "  return %b : tensor<4xf32>\n}\n")
    counted.clear()
    PassManager(parse_pipeline("sdy-constant-or-scalar-splitter,canonicalize"),
                verify=verify).run(module, PassContext())
    assert states and not any(states), states
    assert counted == []
    assert gc.isenabled()


def test_the_printer_runs_with_the_collector_paused(monkeypatch):
    import shardy_ref.parser.printer as printer
    from shardy_ref.parser import print_module

    module = parse_module("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                          "  return %a : tensor<2xf32>\n}\n")
    print_module(module)  # the printers are loaded (and set up) by the first print
    states = []
    original = printer.Printer._print_op
    monkeypatch.setattr(printer.Printer, "_print_op",
                        lambda self, op, *a, **k: states.append(gc.isenabled())
                        or original(self, op, *a, **k))
    assert "func.func @f" in print_module(module)
    assert states and not any(states) and gc.isenabled()
