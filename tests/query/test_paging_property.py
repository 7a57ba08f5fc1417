"""Paging through a run's events while events keep arriving: every event present when paging began
comes back exactly once, newest first (eventTime, then eventId), and none twice. Property-based,
on both backends."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as note
from hypothesis import strategies as st

from headwater.errors import BadRequest, NotFound
from headwater.events.model import Event
from headwater.events.times import format_ticks, now_ticks
from headwater.events.validate import validate_event
from headwater.query.run_events import read_run_events
from headwater.store import EventStore
from tests.factories import run_event

TICKS = 10_000_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BASE_TICKS = int((datetime(2024, 5, 1, 10, 0, tzinfo=UTC) - EPOCH).total_seconds()) * TICKS
OFFSETS_MINUTES = (0, 120, -330)  # Z, +02:00, -05:30: the same instant written three ways
EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "FAIL", "OTHER")

# Whose event it is, relative to the run being paged (R):
#   self: R itself; child: parent R (root R); grandchild: parent C, root R;
#   foster: parent R, root some other run; nephew: parent C, no root (so its root is C);
#   stranger: an unrelated run.
ROLES = ("self", "child", "grandchild", "foster", "nephew", "stranger")


@dataclass(frozen=True)
class Spec:
    role: str
    seconds: int
    fraction: int  # 100 ns ticks
    offset: int  # minutes
    event_type: str
    upper: bool  # runId sent in upper case


spec_strategy = st.builds(
    Spec,
    role=st.sampled_from(("self", "self", *ROLES)),  # mostly the paged run itself
    seconds=st.integers(0, 6),  # few distinct seconds: equal eventTimes are common
    fraction=st.sampled_from((0, 0, 1, 5_000, 1_234_567, 9_999_999)),
    offset=st.sampled_from(OFFSETS_MINUTES),
    event_type=st.sampled_from(EVENT_TYPES),
    upper=st.booleans(),
)


def time_text(ticks: int, offset_minutes: int) -> str:
    """RFC 3339 text of an instant in the given offset, with as many fraction digits as needed."""
    seconds, fraction = divmod(ticks, TICKS)
    local = EPOCH + timedelta(seconds=seconds, minutes=offset_minutes)
    text = f"{local:%Y-%m-%dT%H:%M:%S}"
    if fraction:
        text += "." + f"{fraction:07d}".rstrip("0")
    if offset_minutes == 0:
        return text + "Z"
    sign = "+" if offset_minutes > 0 else "-"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{text}{sign}{hours:02d}:{minutes:02d}"


def stored_time(ticks: int) -> str:
    seconds, fraction = divmod(ticks, TICKS)
    return f"{EPOCH + timedelta(seconds=seconds):%Y-%m-%dT%H:%M:%S}.{fraction:07d}Z"


@dataclass
class World:
    """The runs of one example (fresh ids, so examples sharing a store never meet) and its events."""

    target: str = field(default_factory=lambda: str(uuid.uuid4()))
    child: str = field(default_factory=lambda: str(uuid.uuid4()))
    other: str = field(default_factory=lambda: str(uuid.uuid4()))
    counter: int = 0
    # eventId -> (ticks, belongs to the target's tree with includeChildren, belongs to the target alone)
    keys: dict[str, tuple[int, bool, bool]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

    def build(self, spec: Spec) -> Event:
        self.counter += 1
        ticks = BASE_TICKS + spec.seconds * TICKS + spec.fraction
        run_id, parent, root = {
            "self": (self.target, None, None),
            "child": (str(uuid.uuid4()), self.target, self.target),
            "grandchild": (str(uuid.uuid4()), self.child, self.target),
            "foster": (str(uuid.uuid4()), self.target, self.other),
            "nephew": (str(uuid.uuid4()), self.child, None),
            "stranger": (str(uuid.uuid4()), self.other, None),
        }[spec.role]
        if spec.upper:
            run_id, parent, root = (x.upper() if x else x for x in (run_id, parent, root))
        doc = run_event(
            run_id,
            event_type=spec.event_type,
            event_time=time_text(ticks, spec.offset),
            job=f"etl.task_{self.counter}",  # distinct content even at an equal eventTime
            parent=parent,
            root=root,
        )
        event = validate_event(doc)
        assert event.event_time == stored_time(ticks)
        in_tree = spec.role in ("self", "child", "grandchild", "foster")
        self.keys[event.event_id] = (ticks, in_tree, spec.role == "self")
        self.events.append(event)
        return event

    def key(self, event_id: str) -> tuple[int, str]:
        return self.keys[event_id][0], event_id

    def member(self, event_id: str, include_children: bool) -> bool:
        _, in_tree, own = self.keys[event_id]
        return in_tree if include_children else own


def append(store: EventStore, events: list[Event]) -> list[bool]:
    return store.append(events, format_ticks(now_ticks()))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_paging_returns_each_event_once_newest_first(store: EventStore, data: st.DataObject) -> None:
    world = World()
    include_children = data.draw(st.booleans(), label="include_children")

    initial = data.draw(st.lists(spec_strategy, min_size=1, max_size=25), label="initial")
    events = [world.build(spec) for spec in initial]
    # Appended in random batches, some events sent twice: duplicates never show up twice.
    sent: list[Event] = []
    while events:
        size = data.draw(st.integers(1, len(events)), label="batch")
        batch, events = events[:size], events[size:]
        sent += batch
        resend = data.draw(st.lists(st.sampled_from(sent), max_size=2), label="resend")
        stored = append(store, batch + resend)
        assert stored[: len(batch)] == [True] * len(batch)
        assert stored[len(batch) :] == [False] * len(resend)

    present = {e for e in world.keys if world.member(e, include_children)}
    # The client's pages and the events arriving after each, drawn before paging: how many pages
    # there are depends on where arrivals sort, which depends on their random run ids, so draws
    # made page by page would differ from one run of an example to the next (Hypothesis then
    # stops with FlakyStrategyDefinition). Pages past the plan are of 6 events, with no arrivals.
    plan = data.draw(
        st.lists(st.tuples(st.integers(1, 6), st.lists(spec_strategy, max_size=3)), max_size=12),
        label="pages",
    )
    # eventId -> the cursor key when it was inserted mid-paging (None: before the first page)
    inserted_at: dict[str, tuple[int, str] | None] = {}
    returned: list[str] = []
    state: str | None = None
    for page_number in itertools.count():
        page_size, arrivals = plan[page_number] if page_number < len(plan) else (6, [])
        try:
            page = read_run_events(
                store,
                world.target,
                page_size=page_size,
                paging_state=state,
                include_children=include_children,
            )
        except NotFound:
            assert state is None and not present, "NotFound for a run with events"
            note("run not found")
            return
        assert page.events or state is None, "a paging state led to an empty page"
        assert len(page.events) <= page_size
        if page.next_paging_state is not None:
            assert len(page.events) == page_size, "a short page before the last"
        for row in page.events:
            assert row.event_id in world.keys, "an event of another example or an unknown event"
            assert world.member(row.event_id, include_children), f"{row.event_id} is not of this run"
            assert row.run_id == row.run_id.lower()
        returned += [e.event_id for e in page.events]
        state = page.next_paging_state
        if state is None:
            break
        # Events arriving while the client pages: some newer, some older than where it stands.
        cursor = world.key(returned[-1])
        if arrivals:
            new = [world.build(spec) for spec in arrivals]
            append(store, new)
            for arrival in new:
                if world.member(arrival.event_id, include_children):
                    inserted_at[arrival.event_id] = cursor

    assert len(returned) == len(set(returned)), "an event came back twice"
    keys = [world.key(e) for e in returned]
    assert keys == sorted(keys, reverse=True), "not newest first (eventTime desc, eventId desc)"
    assert present <= set(returned), f"missing events present when paging began: {present - set(returned)}"
    late = set(returned) - present
    assert late <= set(inserted_at)
    # A late event comes back exactly when it sorts after the position the client had reached.
    for event_id, cursor in inserted_at.items():
        assert (event_id in late) == (world.key(event_id) < cursor), event_id
        note("late arrival returned" if event_id in late else "late arrival behind the cursor")


def test_paging_state_belongs_to_its_query(store: EventStore) -> None:
    world = World()
    append(store, [world.build(Spec("self", s, 0, 0, "RUNNING", False)) for s in range(3)])
    append(store, [world.build(Spec("child", 1, 0, 0, "START", False))])
    page = read_run_events(store, world.target, page_size=1, paging_state=None, include_children=False)
    assert page.next_paging_state is not None
    with pytest.raises(BadRequest, match="another query"):
        read_run_events(
            store, world.target, page_size=1, paging_state=page.next_paging_state, include_children=True
        )
    with pytest.raises(BadRequest, match="another query"):
        read_run_events(
            store, world.other, page_size=1, paging_state=page.next_paging_state, include_children=False
        )
    for garbage in ("not-a-state", "e30", page.next_paging_state[:-3]):
        with pytest.raises(BadRequest, match="pagingState"):
            read_run_events(store, world.target, page_size=1, paging_state=garbage, include_children=False)
