"""Lexing and LALR parsing in one loop, over the tables of a built Lark parser.

Lark's contextual lexer and LALR parser (https://lark-parser.readthedocs.io/en/stable/
parsers.html) spend most of a large parse in per-token overhead: a regex match per token
plus one per whitespace run, a ``LineCounter`` fed every token, and a generator and a
``feed_token`` call per token with table keys that are ``Token``/``Rule`` objects. Only that
driver loop is replaced here; the grammar, terminals and their order, the contextual lexer
states and the parse table all stay Lark's:

* each contextual-lexer state matches with one regex: whitespace and comments as an
  atomic skipped prefix, then the state's terminals as named groups in Lark's order (an
  alternation matches with its first alternative that matches, as Lark's scanner does).
  A state compiles it once used often enough; before that it tries the terminals' single
  regexes (start-up matters: see :mod:`shardy_ref.parser.lazy_scanner`);
* Lark's keyword ``UnlessCallback`` becomes a dict lookup;
* tokens get type, value and offsets; line and column are computed when asked for;
* a terminal that every rule filters out (punctuation, keywords) is pushed as its plain
  text, which the rule's child filter drops by position;
* the parse table is re-keyed by plain strings, reductions by rule index;
* a :class:`Shortcut` may read a whole phrase where it starts, for the goto the phrase's
  reductions would reach (:mod:`shardy_ref.parser.op_shortcut` rebuilds repeated op lines
  and attr-dicts from what the loop made of the first ones).

Any lexing or parse error raises :class:`Fallback`: the caller reruns ``Lark.parse``, which
raises Lark's own error, so error messages do not depend on this module.
"""
from __future__ import annotations

import copy
import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from functools import partial
from operator import itemgetter

from lark.lexer import PatternStr, Token, UnlessCallback
from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders
from lark.parsers.lalr_analysis import Shift
from lark.tree import Tree

from shardy_ref.parser.lazy_scanner import HOT_AFTER

# text no terminal may start with where the ignored terminals (whitespace, comments) skip
# it: the skipped prefix stands for Lark's ignored tokens only if no terminal competes there
_IGNORED_SAMPLES = (" ", "\t", "\n", "\r", "\f", "//", "// x", " x")


class Fallback(Exception):
    """This parse must be redone by Lark (a lexing or parse error, which Lark reports)."""


class _Lines:
    """Line starts of one text, for the line and column of a token on demand."""

    __slots__ = ("starts",)

    def __init__(self, text: str):
        starts = array("q", [0])
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self.starts = starts

    def line(self, pos: int) -> int:
        return bisect_right(self.starts, pos)

    def column(self, pos: int) -> int:
        return pos - self.starts[bisect_right(self.starts, pos) - 1] + 1


class FastToken(Token):
    """A Lark ``Token`` whose line and column come from the text's line starts."""

    __slots__ = ("_lines",)

    @property
    def line(self) -> int:
        return self._lines.line(self.start_pos)

    @property
    def column(self) -> int:
        return self._lines.column(self.start_pos)

    @property
    def end_line(self) -> int:
        return self._lines.line(self.end_pos)

    @property
    def end_column(self) -> int:
        return self._lines.column(self.end_pos)


def make_token(kind: str, text: str, start: int, end: int, lines: _Lines) -> FastToken:
    """The token of ``text[start:end]`` as the loop makes it (:func:`_shift_tokens` does
    the same inline, once per token)."""
    token = str.__new__(FastToken, text[start:end])
    token.type, token.value, token._lines, token.start_pos, token.end_pos = \
        kind, str(token), lines, start, end
    return token


class _ColdMatch:
    """What the driver reads of a regex match, for a state not compiled yet."""

    __slots__ = ("lastgroup", "pos", "stop", "value")

    def __init__(self, name: str, value: str, pos: int):
        self.lastgroup, self.value, self.pos, self.stop = name, value, pos, pos + len(value)

    def group(self, _name: str) -> str:
        return self.value

    def start(self, _name: str) -> int:
        return self.pos

    def end(self) -> int:
        return self.stop


class _StateLexer:
    """The lexer shared by the contextual-lexer states with the same terminals."""

    __slots__ = (
        "flags",
        "keywords",
        "singles",
        "skip",
        "skip_prefix",
        "states",
        "table",
        "terminals",
        "uses",
    )

    def __init__(self, basic_lexer, tables: _Lexers):
        scanner = basic_lexer.scanner
        ignored = basic_lexer.ignore_types
        self.terminals = [t for t in scanner.terminals if t.name not in ignored]
        self.flags = scanner.g_regex_flags
        self.skip_prefix, self.skip = tables.skip_prefix, tables.skip
        self.singles = [(name, rx) for name, rx in scanner._single_regexes()
                        if name not in ignored]
        self.uses = 0
        self.states: list[int] = []
        self.table = tables
        self.keywords = _keywords(basic_lexer)

    def match(self, text: str, pos: int):
        """Match with the single regexes, until this lexer has been used enough."""
        self.uses += 1
        if self.uses > HOT_AFTER:
            hot = self.compile()
            for state in self.states:
                self.table[state] = (hot, self.keywords)
            return hot(text, pos)
        start = self.skip(text, pos).end()
        for name, rx in self.singles:
            m = rx.match(text, start)
            if m:
                return _ColdMatch(name, m.group(), start)
        return None

    def compile(self):
        alternatives = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in self.terminals)
        return re.compile(f"{self.skip_prefix}(?:{alternatives})", self.flags).match


def _keywords(basic_lexer) -> dict[str, dict[str, str]]:
    """Lark's keyword callbacks as ``{terminal: {text: keyword terminal}}``; an unknown
    kind of lexer callback is not supported."""
    out: dict[str, dict[str, str]] = {}
    for name, callback in basic_lexer.callback.items():
        if not isinstance(callback, UnlessCallback) or not all(
                isinstance(t.pattern, PatternStr) and not t.pattern.flags
                for t in callback.scanner.terminals):
            raise NotImplementedError(f"lexer callback for {name}")
        for t in callback.scanner.terminals:
            out.setdefault(name, {}).setdefault(t.pattern.value, t.name)
    return out


class _Lexers(dict):
    """Parser state -> (match function, keywords), filled on first use of each state."""

    def __init__(self, contextual_lexer, ignore_regexes: list[str]):
        super().__init__()
        self.contextual = contextual_lexer
        self.by_lexer: dict[int, _StateLexer] = {}
        self.skip_prefix = "(?>(?:" + "|".join(ignore_regexes) + ")*)"
        self.skip = re.compile(self.skip_prefix).match
        self.ignored = re.compile("|".join(ignore_regexes))
        self.checked: set[str] = set()  # terminals _check_no_terminal_at_ignored passed

    def __missing__(self, state: int):
        basic = self.contextual.lexers[state]
        lexer = self.by_lexer.get(id(basic))
        if lexer is None:
            lexer = self.by_lexer[id(basic)] = _StateLexer(basic, self)
            _check_no_terminal_at_ignored(lexer, self.ignored, self.checked)
        lexer.states.append(state)
        entry = self[state] = (lexer.match, lexer.keywords)
        return entry


def _check_no_terminal_at_ignored(lexer: _StateLexer, ignored: re.Pattern,
                                  checked: set[str]) -> None:
    """The skipped prefix is only right if Lark would skip there too: no terminal of the
    state may match where whitespace or a comment starts."""
    for name, rx in lexer.singles:
        if name in checked:
            continue
        for sample in _IGNORED_SAMPLES:
            if rx.match(sample) or not ignored.match(sample):
                raise NotImplementedError(f"terminal {name} matches ignored text {sample!r}")
        checked.add(name)


class _Actions(dict):
    """Parser state -> {terminal or rule name: (shift?, state or rule index, size, origin)},
    converted from Lark's table on first use of each state (start-up matters)."""

    def __init__(self, lark_states: dict, rules) -> None:
        super().__init__()
        self.lark_states = lark_states
        self.rule_index = {rule: i for i, rule in enumerate(rules)}

    def __missing__(self, state: int) -> dict:
        row = {}
        for symbol, (action, arg) in self.lark_states[state].items():
            if action is Shift:
                row[str(symbol)] = (True, arg, 0, None)
            else:
                row[str(symbol)] = (False, self.rule_index[arg], len(arg.expansion),
                                    str(arg.origin.name))
        self[state] = row
        return row


@dataclass(frozen=True, slots=True)
class Tables:
    """What :func:`parse` needs of one Lark parser, prepared once per parser object."""

    lexers: _Lexers
    actions: _Actions
    rules: tuple  # the Lark ``Rule`` of each rule index
    start_states: dict
    end_states: dict
    dropped: frozenset  # terminals every rule filters out
    reducers: dict  # id(callbacks) -> (callbacks, the _Makers of their rules' callbacks)
    terminals: dict  # terminal name -> its regex, as Lark compiles it


def prepare(lark_parser) -> Tables:
    """The tables of a built ``Lark`` parser (LALR, contextual lexer, no postlexer)."""
    conf = lark_parser.lexer_conf
    if lark_parser.options.postlex is not None or conf.callbacks:
        raise NotImplementedError("postlexer or lexer callbacks")
    by_name = {t.name: t for t in conf.terminals}
    lexers = _Lexers(lark_parser.parser.lexer,
                     [by_name[name].pattern.to_regexp() for name in conf.ignore])
    table = lark_parser.parser.parser._parse_table
    rules = tuple(lark_parser.rules)
    return Tables(lexers, _Actions(table.states, rules), rules, table.start_states,
                  table.end_states, _dropped_terminals(rules), {},
                  {t.name: t.pattern.to_regexp() for t in conf.terminals})


def _dropped_terminals(rules) -> frozenset:
    """Terminals that every rule's child filter drops (Lark keeps a filtered-out terminal
    only in a ``!rule``, which keeps all tokens)."""
    kept, dropped = set(), set()
    for rule in rules:
        keep_all = rule.options.keep_all_tokens
        for symbol in rule.expansion:
            if symbol.is_term:
                (dropped if symbol.filter_out and not keep_all else kept).add(symbol.name)
    return frozenset(dropped - kept)


def parse(tables: Tables, text: str, start: str, callbacks: dict, receiver=None,
          shortcuts: tuple = ()):
    """Parse ``text`` from rule ``start``, applying ``callbacks`` (Lark's, by ``Rule``) as
    rules reduce; returns the start rule's value. Raises :class:`Fallback` on any error.
    A callback with a ``forwards_to`` function stands for ``forwards_to(receiver, children)``
    (see :class:`_Reducers`); ``shortcuts`` may read whole phrases themselves
    (:class:`Shortcut`)."""
    if any(isinstance(key, str) for key in callbacks):
        raise Fallback  # token callbacks (a transformer visiting tokens): Lark's loop
    reduce = _Reducers(tables, callbacks, receiver, shortcuts)
    states = [tables.start_states[start]]
    values: list = []
    _shift_tokens(tables, text, states, values, reduce, shortcuts)
    return _finish(tables.actions, tables.end_states[start], states, values, reduce)


class Shortcut:
    """A reader of whole phrases of one nonterminal, tried where the loop is about to shift
    ``terminal`` from a state with a goto on ``nonterminal``: ``read(text, start, state,
    lines)`` returns the nonterminal's value and the offset after its text, or None to let
    the loop go on token by token. The loop then takes the goto, as if it had shifted the
    phrase's tokens and reduced them to ``nonterminal``; so a shortcut may only read text
    that the grammar reads as exactly one ``nonterminal`` from there, with the values the
    callbacks would give. A shortcut that ``observes`` is told of each value the loop's own
    reductions of ``nonterminal`` give (``reduced``), to learn from."""

    terminal = ""
    nonterminal = ""
    observes = False

    def read(self, text: str, start: int, state: int, lines: _Lines):  # pragma: no cover
        raise NotImplementedError

    def reduced(self, value) -> None:  # pragma: no cover
        raise NotImplementedError


class _Gotos(dict):
    """Parser state -> its goto state on one nonterminal (None: none), on first use."""

    def __init__(self, actions: _Actions, nonterminal: str) -> None:
        super().__init__()
        self.actions, self.nonterminal = actions, nonterminal

    def __missing__(self, state: int):
        action = self.actions[state].get(self.nonterminal)
        goto = self[state] = action[1] if action is not None else None
        return goto


class _Reducers(dict):
    """Rule index -> the function its reduction calls, made on first use in one parse.

    Lark's callback of a rule is its child filter (dropping filtered-out tokens, adding
    ``None`` for absent optional parts, splicing in ``_rule`` children) around the
    transformer's method; with a ``forwards_to`` function and a ``receiver`` the method
    is called directly, and a filter that only picks children becomes an ``itemgetter``,
    saving two Python calls per reduction. A repetition (``x*``, ``x ("," x)*``) grows
    its list in place (:func:`_appending`). How each rule's callback is made is worked out
    once per set of Lark callbacks (:class:`_Makers`): for a small text, that was most of
    the parse's set-up."""

    def __init__(self, tables: Tables, callbacks: dict, receiver, shortcuts: tuple = ()) -> None:
        super().__init__()
        entry = tables.reducers.get(id(callbacks))
        if entry is None or entry[0] is not callbacks:
            entry = tables.reducers[id(callbacks)] = (callbacks, _Makers(tables.rules, callbacks))
        self.makers, self.rules, self.receiver = entry[1], tables.rules, receiver
        self.observers = {s.nonterminal: s.reduced for s in shortcuts if s.observes}

    def __missing__(self, index: int):
        callback = self.makers[index](self.receiver)
        if self.observers:
            observer = self.observers.get(str(self.rules[index].origin.name))
            if observer is not None:
                callback = _observed(callback, observer)
        self[index] = callback
        return callback


class _Makers(dict):
    """Rule index -> a function of the receiver (or None) that makes the rule's callback."""

    def __init__(self, rules: tuple, callbacks: dict) -> None:
        super().__init__()
        self.rules, self.callbacks = rules, callbacks

    def __missing__(self, index: int):
        rule = self.rules[index]
        callback = self.callbacks[rule]
        appended = _appending(rule, callback)
        if appended is not None:
            maker = self[index] = lambda receiver: appended
        else:
            maker = self[index] = _direct_maker(callback, len(rule.expansion))
        return maker


def _appending(rule, callback):
    """For a left-recursive step of a repetition Lark made (``__x_star_n: __x_star_n
    [sep] x``, whose callback splices the list's children and ``x`` into a new ``Tree``
    of the same name, over the same list grown), the function appending ``x`` to the
    list's own ``Tree``; else None. (Lark's filter reuses the list already: only the new
    ``Tree`` and the filter's generic loop are saved.)"""
    if type(callback) is not ChildFilterLALR_NoPlaceholders or not rule.expansion or \
            rule.expansion[0] != rule.origin:
        return None
    include, builder = callback.to_include, callback.node_builder
    if len(include) != 2 or include[0] != (0, True) or include[1][1] or \
            not (type(builder) is partial and builder.func is Tree and
                 builder.args == (rule.origin.name,) and not builder.keywords):
        return None
    item = include[1][0]

    def append(children):
        node = children[0]
        node.children.append(children[item])
        return node
    return append


def _observed(callback, observer):
    """``callback``, telling ``observer`` each value it gives."""
    def observed(children):
        value = callback(children)
        observer(value)
        return value
    return observed


def _direct_maker(callback, size: int):
    """receiver -> ``callback`` calling its ``forwards_to`` function on ``receiver`` directly
    (``callback`` itself without a receiver or such a function)."""
    if type(callback) not in (ChildFilterLALR, ChildFilterLALR_NoPlaceholders):
        method = getattr(callback, "forwards_to", None)
        if method is None:
            return lambda receiver: callback
        return lambda receiver: callback if receiver is None else partial(method, receiver)
    method = getattr(callback.node_builder, "forwards_to", None)
    if method is None:
        return lambda receiver: callback
    picks = _picks(callback)
    if picks is None:  # it splices in children: Lark's filter, then the method directly
        def splicing(receiver):
            if receiver is None:
                return callback
            direct = copy.copy(callback)
            direct.node_builder = partial(method, receiver)
            return direct
        return splicing
    return lambda receiver: callback if receiver is None else \
        _picking(method, receiver, picks, size)


def _picks(child_filter) -> list | None:
    """The children Lark's LALR child filter passes on, by index (``None``: a placeholder
    for an absent optional part), or None if it splices ``_rule`` children in."""
    picks: list = []
    for i, expand, *nones in child_filter.to_include:
        if expand:
            return None
        picks += [None] * (nones[0] if nones else 0) + [i]
    return picks + [None] * getattr(child_filter, "append_none", 0)


def _picking(method, receiver, picks: list, size: int):
    """``children -> method(receiver, [the children picked])``; a placeholder picks the
    ``None`` appended after the ``size`` children."""
    if len(picks) < 2:
        index = picks[0] if picks else None
        if index is None:
            return lambda children: method(receiver, [None] * len(picks))
        return lambda children: method(receiver, [children[index]])
    if None not in picks:
        pick = itemgetter(*picks)
        return lambda children: method(receiver, list(pick(children)))
    pick = itemgetter(*(size if i is None else i for i in picks))

    def with_placeholders(children):
        children.append(None)
        return method(receiver, list(pick(children)))
    return with_placeholders


def _shift_tokens(tables: Tables, text: str, states: list, values: list, reduce: list,
                  shortcuts: tuple) -> None:
    """Lex and parse up to the end of the input (before ``$END``)."""
    lexers, actions, dropped = tables.lexers, tables.actions, tables.dropped
    lines = _Lines(text)
    new, token_class = str.__new__, FastToken
    cut = _Cut(shortcuts, actions)
    cut_kinds = cut.terminals
    pos = 0
    state = states[-1]
    while True:
        match, keywords = lexers[state]
        m = match(text, pos)
        if m is None:
            return _at_end(lexers, text, pos)
        kind = m.lastgroup
        value = m.group(kind)
        if kind in keywords:
            kind = keywords[kind].get(value, kind)
        start, pos = m.start(kind), m.end()
        while True:  # reduce while the table says so, then shift the token
            action = actions[state].get(kind)
            if action is None:
                raise Fallback
            shift, arg, size, origin = action
            if shift:
                break
            children = values[len(values) - size:]
            del states[len(states) - size:], values[len(values) - size:]
            values.append(reduce[arg](children))
            state = actions[states[-1]][origin][1]
            states.append(state)
        # a phrase a shortcut reads (then its goto), or the token
        phrase = cut(kind, text, start, state, lines) if kind in cut_kinds else None
        if phrase is not None:
            token, pos, arg = phrase
        elif kind in dropped:
            token = value
        else:
            token = new(token_class, value)
            token.type, token.value, token._lines, token.start_pos, token.end_pos = \
                kind, value, lines, start, pos
        state = arg
        states.append(arg)
        values.append(token)


def _at_end(lexers: _Lexers, text: str, pos: int) -> None:
    """Where no terminal matches: the end of the input, if only ignored text is left."""
    if lexers.skip(text, pos).end() < len(text):
        raise Fallback


class _Cut:
    """The :class:`Shortcut` s behind their goto checks: called with the terminal about to
    be shifted, ``(value, end, goto state)`` of the first that reads a phrase, or None."""

    __slots__ = ("by_terminal", "terminals")

    def __init__(self, shortcuts: tuple, actions: _Actions) -> None:
        self.by_terminal: dict[str, list] = {}
        for shortcut in shortcuts:
            self.by_terminal.setdefault(shortcut.terminal, []).append(
                (shortcut.read, _Gotos(actions, shortcut.nonterminal)))
        self.terminals = frozenset(self.by_terminal)

    def __call__(self, kind: str, text: str, start: int, state: int, lines: _Lines):
        for read, gotos in self.by_terminal[kind]:
            goto = gotos[state]
            if goto is not None:
                phrase = read(text, start, state, lines)
                if phrase is not None:
                    return (*phrase, goto)
        return None


def _finish(actions: dict, end_state: int, states: list, values: list, reduce: list):
    """At the end of the input: reduce on ``$END`` up to the start rule."""
    while True:
        action = actions[states[-1]].get("$END")
        if action is None or action[0]:
            raise Fallback
        _, arg, size, origin = action
        children = values[-size:] if size else []
        del states[len(states) - size:], values[len(values) - size:]
        values.append(reduce[arg](children))
        states.append(actions[states[-1]][origin][1])
        if states[-1] == end_state:
            return values[-1]
